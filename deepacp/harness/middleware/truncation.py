"""TruncatedCallsMiddleware: a tool call cut off by the output token limit never runs.

When a reply stops at the limit (Anthropic `max_tokens`, OpenAI and Ollama `length`) in
the middle of a tool call, the clients still parse the partial JSON into a call that looks
complete: a `write_file` whose content stops mid-line would write a truncated file. Each
call of such a reply is answered here, in the model's own step, with an error result
telling the model what happened, so nothing runs, no approval is asked and the history
stays valid for the provider. The model then tries again with less; if its next reply is
cut off too, the run ends there (stop reason `max_tokens`) instead of paying for the same
truncated answer over and over.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from deepacp.harness.middleware.responses import Response, messages_of, with_messages

LIMIT_STOPS = frozenset({"max_tokens", "length"})
CUT_OFF = (
    "Not run: your reply reached the output token limit while you were writing this call, "
    "so its arguments are cut off. Make the call again with shorter arguments (for a large "
    "file, write the first part, then add the rest with edit_file)."
)


def stop_of(message: AIMessage) -> str:
    """Why the model stopped, as the provider said it (lower case; "" when unknown)."""
    meta = message.response_metadata or {}
    reason = meta.get("stop_reason") or meta.get("finish_reason") or meta.get("done_reason")
    return str(reason or "").lower()


def cut_off_calls(message: AIMessage) -> list[dict[str, Any]]:
    """The tool calls (valid-looking or not) of a reply that stopped at the token limit."""
    if stop_of(message) not in LIMIT_STOPS:
        return []
    return [*message.tool_calls, *message.invalid_tool_calls]  # type: ignore[list-item]


def _last_reply(messages: list[Any]) -> AIMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)


def cut_off_twice(messages: list[AnyMessage]) -> bool:
    """Whether the last two replies were both cut off in a tool call, with nothing between
    them but the answers to the first one's calls."""
    replies = []  # from the end, stopping at the second reply: a long thread is not read
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage):
            replies.append(index)
            if len(replies) == 2:
                break
    if len(replies) < 2:
        return False
    last, first = replies
    return (
        all(bool(cut_off_calls(messages[i])) for i in replies)  # type: ignore[arg-type]
        and all(isinstance(m, ToolMessage) for m in messages[first + 1 : last])
    )


class TruncatedCallsMiddleware(AgentMiddleware):
    """Answers cut-off tool calls with an error instead of running them (see the module)."""

    def _answer(self, response: Response) -> Response:
        inner = messages_of(response)
        reply = _last_reply(inner.result)
        calls = cut_off_calls(reply) if reply is not None else []
        if not calls:
            return response
        answers = [
            ToolMessage(CUT_OFF, tool_call_id=c["id"] or "", name=c["name"] or "", status="error")
            for c in calls
        ]
        return with_messages(response, after=answers)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | ExtendedModelResponse:
        return self._answer(handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | ExtendedModelResponse:
        return self._answer(await handler(request))

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
        return {"jump_to": "end"} if cut_off_twice(state["messages"]) else None

    @hook_config(can_jump_to=["end"])
    async def aafter_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)
