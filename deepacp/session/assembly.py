"""The one place a session's graph is built: for a session in this process
(`hosts/local.py`) and in the LangGraph app (`deepacp/langgraph_app.py`), from the same
harness, approvals and modes, and what the session's parts add (`GraphParts`). Light to
import: the harness loads when a graph is built."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deepacp.config import DEFAULT_GOAL_ROUNDS, RetryPolicy, load_config
from deepacp.session.turns.approvals import APPROVAL_DECISIONS, GATED_TOOLS, ApprovalPolicy
from deepacp.session.workspace import MEMORY_SOURCES, SKILL_SOURCES

if TYPE_CHECKING:
    from deepacp.backends.protocol import Backend
    from deepacp.harness import HarnessProfile


@dataclass
class Contributions:
    """What a session's parts add to its graph and its turns."""

    tools: list[Any] = field(default_factory=list)
    gated: set[str] = field(default_factory=set)
    """Tool names that need approval like the file tools (MCP tools that change things)."""
    hooks: Any = None
    """The hook runner the harness calls (`deepacp.harness.contracts.HookRunner`)."""
    before_compact: Callable[[str], Awaitable[None]] | None = None
    goal: Callable[[], str | None] | None = None
    goal_rounds: int = DEFAULT_GOAL_ROUNDS
    background: Any = None
    """The background-task runner (None: the agent has no background-task tools)."""
    inbox: list[Callable[[], Awaitable[list[Any]]]] = field(default_factory=list)
    """What the model should hear before its next call, one source each."""
    task_status: Callable[[str], Any] = lambda task_id: None
    profile: str | None = None
    """The harness profile the user chose (None: by the model and its server)."""
    """Where a background task stands, as its runner knows it (None: not known here)."""


def import_harness() -> None:
    """Import what building a graph and running a turn need (LangChain, LangGraph, the
    harness): a server does it in a thread of its own, ahead of the first turn."""
    import deepacp.session.turns.ask
    import deepacp.session.turns.turn  # noqa: F401 (LangGraph, the projection)
    from deepacp.harness import (  # noqa: F401 (imported for their modules)
        InboxMiddleware,
        ModeMiddleware,
        SummarizationMiddleware,
        TurnLimitMiddleware,
        create_deep_agent,
    )


def approval_gate(policy: ApprovalPolicy) -> dict[str, Any]:
    """interrupt_on entries for the gated tools, deciding per call from the policy."""
    names = GATED_TOOLS | policy.extra_gated

    def when(request: Any) -> bool:
        call = request.tool_call
        return policy.needs_approval(call["id"] or "", call["name"], call.get("args") or {})

    return {name: {"allowed_decisions": list(APPROVAL_DECISIONS), "when": when} for name in names}


def _inbox(sources: list[Callable[[], Awaitable[list[Any]]]]) -> Any:
    async def arrived() -> list[Any]:
        return [message for source in sources for message in await source()]

    return arrived


def assemble(
    model: Any,
    backend: Backend,
    policy: ApprovalPolicy,
    checkpointer: Any,
    parts: Contributions,
    *,
    planning: bool = True,
    profile: HarnessProfile | None = None,
    retry: RetryPolicy | None = None,
    summarizer: Any = None,
) -> Any:
    """A session's harness: the deep agent over the session's workspace, its approvals and
    modes, the `ask_user` tool, and what the parts add. `summarizer`: the session's
    (None: one is made here)."""
    from deepacp.harness import (
        InboxMiddleware,
        ModeMiddleware,
        SummarizationMiddleware,
        TurnLimitMiddleware,
        create_deep_agent,
    )
    from deepacp.session.turns.ask import ask_user_tool

    policy.extra_gated = frozenset(parts.gated)
    if summarizer is None:
        summarizer = SummarizationMiddleware(backend, before_compact=parts.before_compact)
    mode = ModeMiddleware(lambda: policy.mode == "plan", policy.gated)
    middleware = [summarizer, mode, TurnLimitMiddleware()]
    if parts.inbox:
        middleware.append(InboxMiddleware(_inbox(parts.inbox)))
    return create_deep_agent(
        model,
        [*parts.tools, ask_user_tool()],
        backend=backend,
        middleware=middleware,
        interrupt_on=approval_gate(policy),
        checkpointer=checkpointer,
        memory=MEMORY_SOURCES,
        skills=SKILL_SOURCES,
        planning=planning,
        profile=profile,
        retry=retry,
        hooks=parts.hooks,
        goal=parts.goal,
        goal_rounds=parts.goal_rounds,
        background=parts.background,
        verify=load_config().verify,
    )


def assemble_task(
    model: Any,
    backend: Backend,
    policy: ApprovalPolicy,
    *,
    profile: HarnessProfile | None = None,
    retry: RetryPolicy | None = None,
) -> Any:
    """A background task's harness on its own graph: the general-purpose sub-agent with
    the session's workspace, mode and "always" answers, refusing what would be asked."""
    from deepacp.harness import create_background_agent
    from deepacp.session.turns.ask import ask_user_tool

    return create_background_agent(
        model,
        [ask_user_tool()],
        backend=backend,
        interrupt_on=approval_gate(policy),
        skills=SKILL_SOURCES,
        profile=profile,
        retry=retry,
    )
