"""HooksMiddleware: the tool events of the user's hooks, fed to a runner the caller gives.

Before a tool runs (`pre_tool_use`) the runner may deny the call, with a reason the model
reads as the tool's result, or rewrite its arguments; after it, `post_tool_use` or
`post_tool_use_failure` report the outcome, and `task` calls are also `subagent_start` and
`subagent_stop`. It sits outside the approval gate: the user is asked about the call as
the hooks left it. The harness knows nothing of where hooks come from or how they run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from deepacp.harness.contracts import HookDecision, HookRunner
from deepacp.harness.messages import text_of
from deepacp.harness.names import TASK

PRE_TOOL_USE = "pre_tool_use"
POST_TOOL_USE = "post_tool_use"
POST_TOOL_USE_FAILURE = "post_tool_use_failure"
SUBAGENT_START = "subagent_start"
SUBAGENT_STOP = "subagent_stop"


def tool_result(result: Any) -> ToolMessage | None:
    """The tool's message in what a tool call returned (a message, or a Command holding it)."""
    if isinstance(result, ToolMessage):
        return result
    if isinstance(result, Command) and isinstance(result.update, dict):
        found = [m for m in result.update.get("messages") or [] if isinstance(m, ToolMessage)]
        return found[-1] if found else None
    return None


class HooksMiddleware(AgentMiddleware):
    """Tool events for `runner` (see the module docstring)."""

    def __init__(self, runner: HookRunner) -> None:
        super().__init__()
        self.runner = runner
        self._paused: dict[str, HookDecision] = {}
        """Calls that stopped for approval: on resume the call runs again, and keeps the
        decision (and rewrite) the user was asked about instead of asking the hooks again."""

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        about = {"tool_name": call["name"], "tool_call_id": call["id"], "tool_args": call["args"]}
        resumed = self._paused.pop(call["id"] or "", None)
        decision = resumed or await self.runner(PRE_TOOL_USE, about)
        if not decision.allow:
            return ToolMessage(
                content=f"Refused by a hook: {decision.reason or 'no reason given'}",
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
        if decision.args is not None:
            call = {**call, "args": decision.args}
            request = request.override(tool_call=call)
            about = {**about, "tool_args": decision.args}
        subagent = {"tool_call_id": call["id"], **call["args"]} if call["name"] == TASK else None
        if subagent is not None and resumed is None:
            await self.runner(SUBAGENT_START, subagent)
        try:
            result = await handler(request)
        except GraphBubbleUp:  # an approval or a question: the call runs again on resume
            self._paused[call["id"] or ""] = decision
            raise
        except Exception as exc:
            failure = {
                **about,
                "tool_status": "error",
                "tool_output": f"{type(exc).__name__}: {exc}",
            }
            await self.runner(POST_TOOL_USE_FAILURE, failure)
            if subagent is not None:
                await self.runner(SUBAGENT_STOP, {**subagent, "tool_status": "error"})
            raise
        message = tool_result(result)
        status = "error" if message is not None and message.status == "error" else "success"
        output = text_of(message.content) if message is not None else ""
        outcome = {**about, "tool_status": status, "tool_output": output}
        await self.runner(POST_TOOL_USE if status == "success" else POST_TOOL_USE_FAILURE, outcome)
        if subagent is not None:
            await self.runner(SUBAGENT_STOP, {**subagent, "tool_status": status, "report": output})
        return result
