"""A model call's response as middleware sees it — a `ModelResponse`, or one carrying a
state update (`ExtendedModelResponse`) — and the same response with messages added."""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents.middleware import ExtendedModelResponse, ModelResponse
from langchain_core.messages import BaseMessage

Response = ModelResponse | ExtendedModelResponse


def messages_of(response: Response) -> ModelResponse:
    """The response without the state update it may carry."""
    return response.model_response if isinstance(response, ExtendedModelResponse) else response


def with_messages(
    response: Response, before: Sequence[BaseMessage] = (), after: Sequence[BaseMessage] = ()
) -> Response:
    """`response` with `before` ahead of its messages and `after` behind them, its state
    update kept."""
    inner = messages_of(response)
    merged = ModelResponse([*before, *inner.result, *after], inner.structured_response)
    if isinstance(response, ExtendedModelResponse):
        return ExtendedModelResponse(merged, response.command)
    return merged
