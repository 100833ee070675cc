"""ModeMiddleware: a read-only mode (deepacp's `plan`) hides the tools that change things
and refuses them if called anyway; the caller says when it is on and which tools change
things."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from deepacp.harness.prompts import append_to_system

READ_ONLY_NOTE = (
    "You are in plan mode: read-only. Explore with the read and search tools and propose a "
    "plan; do not try to change files or run commands until the user switches mode."
)


class ModeMiddleware(AgentMiddleware):
    def __init__(self, read_only: Callable[[], bool], changes: Callable[[str], bool]) -> None:
        super().__init__()
        self.read_only = read_only
        self.changes = changes

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        if not self.read_only():
            return await handler(request)
        tools = [t for t in request.tools if not self.changes(getattr(t, "name", ""))]
        note = append_to_system(request, READ_ONLY_NOTE)
        return await handler(request.override(tools=tools, system_message=note))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        if self.read_only() and self.changes(call["name"]):
            return ToolMessage(
                content=f"Refused: plan mode is read-only, so {call['name']} is not available.",
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
        return await handler(request)
