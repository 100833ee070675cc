"""ModelViewMiddleware: the base of a middleware that only changes what the model is sent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse


class ModelViewMiddleware(AgentMiddleware):
    """Sends the model `_view(request)` instead of the request, on both the sync and the
    async path; the state is not changed."""

    def _view(self, request: ModelRequest) -> ModelRequest:
        raise NotImplementedError

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._view(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(self._view(request))
