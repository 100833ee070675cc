"""RefuseApprovalsMiddleware: in a background task, nobody is there to ask; what the
approval gate would put to the user is refused instead, as a tool error the sub-agent
reads — never run unasked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest

NO_APPROVAL = (
    "Refused: background tasks cannot ask for approval (or ask the user anything), and "
    "{name} would ask here. Do not retry it; report that it needs doing in the foreground, "
    "where the user can answer."
)


class RefuseApprovalsMiddleware(AgentMiddleware):
    """In a background task: refuse, with an error the sub-agent reads, each call the
    approval gate (`interrupt_on`) would ask the user about; there is nobody to ask."""

    def __init__(self, interrupt_on: Mapping[str, Any]) -> None:
        super().__init__()
        self.interrupt_on = dict(interrupt_on)

    def _asks(self, request: ToolCallRequest) -> bool:
        gate = self.interrupt_on.get(request.tool_call["name"])
        if isinstance(gate, Mapping):
            when = gate.get("when")
            return True if when is None else bool(when(request))
        return bool(gate)

    def _refused(self, request: ToolCallRequest) -> ToolMessage:
        name = request.tool_call["name"]
        return ToolMessage(
            NO_APPROVAL.format(name=name),
            tool_call_id=request.tool_call["id"] or "",
            name=name,
            status="error",
        )

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        if self._asks(request):
            return self._refused(request)
        try:
            return await handler(request)
        except GraphBubbleUp:
            return self._refused(request)  # a tool that stops to ask (ask_user) cannot here
