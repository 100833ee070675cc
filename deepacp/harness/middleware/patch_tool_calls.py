"""PatchToolCallsMiddleware: no tool call is ever left without a result."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, ToolCall, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

INTERRUPTED = (
    "This tool call did not complete: it was interrupted (cancelled by the user or the run "
    "stopped) before it returned a result."
)


def answer_for(call: ToolCall, content: str = INTERRUPTED) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"], status="error")


def dangling_tool_calls(messages: list[AnyMessage]) -> list[ToolCall]:
    """Tool calls that have no ToolMessage answering them."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return [
        call
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]


def repair_dangling_tool_calls(
    messages: list[AnyMessage], content: str = INTERRUPTED
) -> list[AnyMessage] | None:
    """The message log with every unanswered tool call answered by an error result, placed
    right after the calls' own results; None when nothing is dangling."""
    if not dangling_tool_calls(messages):
        return None
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    repaired: list[AnyMessage] = []
    pending: list[ToolCall] = []
    for message in messages:
        if pending and not isinstance(message, ToolMessage):
            repaired.extend(answer_for(c, content) for c in pending)
            pending = []
        repaired.append(message)
        if isinstance(message, AIMessage):
            pending = [c for c in message.tool_calls if c["id"] not in answered]
    repaired.extend(answer_for(c, content) for c in pending)
    return repaired


class PatchToolCallsMiddleware(AgentMiddleware):
    """Before each run, answer tool calls left unanswered by a crash or a cancel.

    Providers reject a history in which a tool call has no result; this keeps a thread
    usable whatever happened to its last run.
    """

    async def abefore_agent(self, state: AgentState, runtime: Any) -> dict | None:
        return self.before_agent(state, runtime)

    def before_agent(self, state: AgentState, runtime: Any) -> dict | None:
        repaired = repair_dangling_tool_calls(state.get("messages", []))
        if repaired is None:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired]}
