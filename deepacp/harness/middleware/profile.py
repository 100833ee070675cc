"""ProfileMiddleware: the tools a harness profile offers the model, as it describes them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from deepacp.harness.middleware.model_view import ModelViewMiddleware
from deepacp.harness.profiles import HarnessProfile


def _name(tool: Any) -> str:
    return str(tool.get("name", "")) if isinstance(tool, dict) else str(getattr(tool, "name", ""))


class ProfileMiddleware(ModelViewMiddleware):
    """Leaves the profile's excluded tools out of every request (and refuses them if the
    model calls one anyway) and gives the others the profile's descriptions."""

    def __init__(self, profile: HarnessProfile) -> None:
        super().__init__()
        self.profile = profile
        self._copies: dict[int, Any] = {}

    def _described(self, tool: Any) -> Any:
        description = self.profile.tool_descriptions.get(_name(tool))
        if description is None or not isinstance(tool, BaseTool):
            return tool
        # One copy per tool, so every request sends the same bytes (a stable cache prefix).
        copy = self._copies.get(id(tool))
        if copy is None:
            copy = self._copies[id(tool)] = tool.model_copy(update={"description": description})
        return copy

    def _view(self, request: ModelRequest) -> ModelRequest:
        tools = [self._described(t) for t in request.tools if self.profile.offers(_name(t))]
        return request.override(tools=tools)

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        call = request.tool_call
        if self.profile.offers(call["name"]):
            return None
        return ToolMessage(
            content=f"Refused: {call['name']} is not available with this model.",
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        return self._refusal(request) or handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        return self._refusal(request) or await handler(request)
