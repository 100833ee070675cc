"""The harness as an editor session runs it: the workspace, approvals, and modes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from deepacp.backends.protocol import Backend
from deepacp.config import DEFAULT_GOAL_ROUNDS, RetryPolicy
from deepacp.harness import create_deep_agent
from deepacp.harness.background import BackgroundRunner
from deepacp.harness.contracts import HookRunner
from deepacp.harness.middleware.inbox import Inbox, InboxMiddleware
from deepacp.harness.profiles import HarnessProfile
from deepacp.harness.prompts import append_to_system
from deepacp.session.approvals import APPROVAL_DECISIONS, GATED_TOOLS, ApprovalPolicy
from deepacp.session.workspace import MEMORY_SOURCES, SKILL_SOURCES

PLAN_MODE_NOTE = (
    "You are in plan mode: read-only. Explore with the read and search tools and propose a "
    "plan; do not try to change files or run commands until the user switches mode."
)


class ModeMiddleware(AgentMiddleware):
    """Plan mode hides the tools that change things, and refuses them if called anyway."""

    name = "ModeMiddleware"

    def __init__(self, policy: ApprovalPolicy) -> None:
        super().__init__()
        self.policy = policy

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        if self.policy.mode != "plan":
            return await handler(request)
        tools = [t for t in request.tools if not self.policy.gated(getattr(t, "name", ""))]
        note = append_to_system(request, PLAN_MODE_NOTE)
        return await handler(request.override(tools=tools, system_message=note))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        if self.policy.mode == "plan" and self.policy.gated(call["name"]):
            return ToolMessage(
                content=f"Refused: plan mode is read-only, so {call['name']} is not available.",
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
        return await handler(request)


def approval_gate(policy: ApprovalPolicy) -> dict[str, Any]:
    """interrupt_on entries for the gated tools, deciding per call from the policy."""
    names = GATED_TOOLS | policy.extra_gated

    def when(request: ToolCallRequest) -> bool:
        call = request.tool_call
        return policy.needs_approval(call["id"] or "", call["name"], call.get("args") or {})

    return {name: {"allowed_decisions": list(APPROVAL_DECISIONS), "when": when} for name in names}


def build_session_agent(
    model: Any,
    backend: Backend,
    policy: ApprovalPolicy,
    checkpointer: Any,
    *,
    tools: list[Any],
    summarizer: AgentMiddleware,
    planning: bool,
    profile: HarnessProfile | None = None,
    retry: RetryPolicy | None = None,
    hooks: HookRunner | None = None,
    goal: Callable[[], str | None] | None = None,
    goal_rounds: int = DEFAULT_GOAL_ROUNDS,
    inbox: Inbox | None = None,
    background: BackgroundRunner | None = None,
) -> Any:
    """The editor session's harness; `profile` None: the model's own (looked up); `goal`
    reads the session's goal at each check; `inbox` brings what arrived during the turn
    (steering, review notes) before each model call; `background` runs the background
    tasks (None: the agent has no background-task tools)."""
    middleware: list[AgentMiddleware] = [summarizer, ModeMiddleware(policy)]
    if inbox is not None:
        middleware.append(InboxMiddleware(inbox))
    return create_deep_agent(
        model,
        tools,
        backend=backend,
        middleware=middleware,
        interrupt_on=approval_gate(policy),
        checkpointer=checkpointer,
        memory=MEMORY_SOURCES,
        skills=SKILL_SOURCES,
        planning=planning,
        profile=profile,
        retry=retry,
        hooks=hooks,
        goal=goal,
        goal_rounds=goal_rounds,
        background=background,
    )


def build_task_agent(
    model: Any,
    backend: Backend,
    policy: ApprovalPolicy,
    *,
    tools: list[Any],
    profile: HarnessProfile | None = None,
    retry: RetryPolicy | None = None,
) -> Any:
    """A background task's harness on its own graph: the general-purpose sub-agent with
    the session's workspace, mode and "always" answers, refusing what would be asked."""
    from deepacp.harness.graph import create_background_agent

    return create_background_agent(
        model,
        tools,
        backend=backend,
        interrupt_on=approval_gate(policy),
        skills=SKILL_SOURCES,
        profile=profile,
        retry=retry,
    )
