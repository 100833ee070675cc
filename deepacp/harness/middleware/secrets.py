"""RedactSecretsMiddleware: no secret from the environment enters the conversation.

Tool results (a command that prints `env`, a file holding a key, an MCP server's answer) are
redacted before the model reads them, and model output before it is stored or acted on, so
the session store, memory files and every later request stay free of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from deepacp.secrets import redact_any, secret_values


class RedactSecretsMiddleware(AgentMiddleware):
    name = "RedactSecretsMiddleware"

    def __init__(self, secrets: list[str] | None = None) -> None:
        super().__init__()
        self.secrets = secret_values() if secrets is None else secrets

    def _tool_result(self, result: Any) -> Any:
        if self.secrets and isinstance(result, ToolMessage):
            content = redact_any(result.content, self.secrets)
            artifact = redact_any(result.artifact, self.secrets)  # MCP structured content
            if content != result.content or artifact != result.artifact:
                return result.model_copy(update={"content": content, "artifact": artifact})
        return result

    def _error(self, exc: Exception) -> None:
        """Redact a failed call's exception in place (LangGraph stores it with the run)."""
        if self.secrets:
            exc.args = redact_any(exc.args, self.secrets)
            if isinstance(getattr(exc, "message", None), str):
                exc.message = redact_any(exc.message, self.secrets)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        return self._tool_result(handler(request))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        return self._tool_result(await handler(request))

    def _message(self, message: Any) -> Any:
        if not isinstance(message, AIMessage):
            return message
        fields = ("content", "tool_calls", "additional_kwargs")  # raw provider tool calls too
        update = {f: redact_any(getattr(message, f), self.secrets) for f in fields}
        if all(update[f] == getattr(message, f) for f in fields):
            return message
        return message.model_copy(update=update)

    def _model_response(self, response: ModelResponse) -> ModelResponse:
        if not self.secrets:
            return response
        return ModelResponse(
            result=[self._message(m) for m in response.result],
            structured_response=response.structured_response,
        )

    # Model output is redacted inside the model call, before the model node stores it (a
    # later hook would leave the original in the checkpointed message log); so is a provider
    # error, which may echo the key it was sent.
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        try:
            return self._model_response(handler(request))
        except Exception as exc:
            self._error(exc)
            raise

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        try:
            return self._model_response(await handler(request))
        except Exception as exc:
            self._error(exc)
            raise
