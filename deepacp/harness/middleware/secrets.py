"""RedactSecretsMiddleware: no secret enters the conversation.

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

_AI_FIELDS = ("content", "tool_calls", "additional_kwargs")  # raw provider tool calls too


def _tool_result(result: Any, secrets: list[str]) -> Any:
    if not secrets or not isinstance(result, ToolMessage):
        return result
    content = redact_any(result.content, secrets)
    artifact = redact_any(result.artifact, secrets)  # MCP structured content
    if content == result.content and artifact == result.artifact:
        return result
    return result.model_copy(update={"content": content, "artifact": artifact})


def _model_message(message: Any, secrets: list[str]) -> Any:
    if not isinstance(message, AIMessage):
        return message
    update = {f: redact_any(getattr(message, f), secrets) for f in _AI_FIELDS}
    if all(update[f] == getattr(message, f) for f in _AI_FIELDS):
        return message
    return message.model_copy(update=update)


def _model_response(response: ModelResponse, secrets: list[str]) -> ModelResponse:
    if not secrets:
        return response
    return ModelResponse(
        result=[_model_message(m, secrets) for m in response.result],
        structured_response=response.structured_response,
    )


def _redact_error(exc: Exception, secrets: list[str]) -> None:
    """Redact a failed call's exception in place (LangGraph stores it with the run)."""
    if secrets:
        exc.args = redact_any(exc.args, secrets)
        if isinstance(message := getattr(exc, "message", None), str):
            exc.message = redact_any(message, secrets)  # type: ignore[attr-defined]  # SDK errors have one


class RedactSecretsMiddleware(AgentMiddleware):
    def __init__(self, secrets: list[str] | None = None) -> None:
        super().__init__()
        self._secrets = secrets

    def secrets(self) -> list[str]:
        """Read at every call: credentials registered after the agent was built count too."""
        return secret_values() if self._secrets is None else self._secrets

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        return _tool_result(handler(request), self.secrets())

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        return _tool_result(await handler(request), self.secrets())

    # Model output is redacted inside the model call, before the model node stores it (a
    # later hook would leave the original in the checkpointed message log); so is a provider
    # error, which may echo the key it was sent.
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        try:
            return _model_response(handler(request), self.secrets())
        except Exception as exc:
            _redact_error(exc, self.secrets())
            raise

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        try:
            return _model_response(await handler(request), self.secrets())
        except Exception as exc:
            _redact_error(exc, self.secrets())
            raise
