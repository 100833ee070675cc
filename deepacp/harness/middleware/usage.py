"""UsageMiddleware: the thread's token usage, summed in its state from what providers report.

Each model call's `usage_metadata` is added to the `usage` state key (a running total that
is checkpointed with the thread, so it survives a reload); a sub-agent's totals are added to
its parent's when its task finishes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, NotRequired

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage
from langgraph.types import Command

from deepacp.harness.usage import USAGE_KEY, TokenUsage, add_usage


class UsageState(AgentState):
    usage: NotRequired[Annotated[dict[str, int], add_usage]]


def _counted(response: ModelResponse) -> ModelResponse | ExtendedModelResponse:
    used = TokenUsage()
    for message in response.result:
        if isinstance(message, AIMessage):
            used = used + TokenUsage.of_call(message.usage_metadata)
    if not used.calls:
        return response
    return ExtendedModelResponse(response, Command(update={USAGE_KEY: used.as_json()}))


class UsageMiddleware(AgentMiddleware):
    state_schema = UsageState

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | ExtendedModelResponse:
        return _counted(handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | ExtendedModelResponse:
        return _counted(await handler(request))
