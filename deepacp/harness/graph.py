"""create_deep_agent: the ordered middleware stack on LangChain's create_agent.

Over 350 lines because the whole order is written here in one place, to be read top to
bottom: each middleware's reason to sit where it does is beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    TodoListMiddleware,
)
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.language_models import BaseChatModel

from deepacp.backends.composite import CompositeBackend
from deepacp.backends.permissions import CommandRule, PermissionBackend, PermissionRule
from deepacp.backends.protocol import Backend
from deepacp.backends.state import StateBackend
from deepacp.config import DEFAULT_GOAL_ROUNDS, RetryPolicy
from deepacp.harness.background import BackgroundRunner
from deepacp.harness.contracts import HookRunner
from deepacp.harness.middleware.background import BackgroundTasksMiddleware
from deepacp.harness.middleware.caching import caching_middleware
from deepacp.harness.middleware.edit_preflight import EditPreflightMiddleware
from deepacp.harness.middleware.filesystem import FilesystemMiddleware
from deepacp.harness.middleware.goal import GRADER_PROMPT, GoalMiddleware, GoalSource
from deepacp.harness.middleware.hooks import HooksMiddleware
from deepacp.harness.middleware.inbox import InboxMiddleware
from deepacp.harness.middleware.memory import MemoryMiddleware
from deepacp.harness.middleware.patch_tool_calls import PatchToolCallsMiddleware
from deepacp.harness.middleware.profile import ProfileMiddleware
from deepacp.harness.middleware.readable_errors import ReadableErrorsMiddleware
from deepacp.harness.middleware.refuse_approvals import RefuseApprovalsMiddleware
from deepacp.harness.middleware.repetition import RepetitionGuardMiddleware
from deepacp.harness.middleware.retry import RetryMiddleware
from deepacp.harness.middleware.secrets import RedactSecretsMiddleware
from deepacp.harness.middleware.skills import SkillsMiddleware
from deepacp.harness.middleware.subagents import (
    GENERAL_PURPOSE,
    GENERAL_PURPOSE_DESCRIPTION,
    GENERAL_PURPOSE_PROMPT,
    CompiledSubAgent,
    SubAgent,
    SubAgentMiddleware,
)
from deepacp.harness.middleware.summarization import SummarizationMiddleware
from deepacp.harness.middleware.thinking import ThoughtOnlyRepliesMiddleware
from deepacp.harness.middleware.tool_loops import ToolLoopMiddleware
from deepacp.harness.middleware.truncation import TruncatedCallsMiddleware
from deepacp.harness.middleware.usage import UsageMiddleware
from deepacp.harness.middleware.verify import VerifyMiddleware
from deepacp.harness.names import (
    HISTORY_DIR,
    LARGE_RESULTS_DIR,
    MUTATING_FILE_TOOLS,
    START_BACKGROUND_TASK,
    TASK,
    WRITE_TODOS,
)
from deepacp.harness.permissions import approval_gates, merge_gates
from deepacp.harness.profiles import FULL, HarnessProfile, profile_for
from deepacp.harness.prompts import BASE_PROMPT, PLAN_PROMPT, PLAN_TOOL_DESCRIPTION
from deepacp.harness.state import DeepAgentState

Middleware = AgentMiddleware[Any, Any, Any]
"""Any middleware, whatever state, context and response types it declares."""

SCRATCH_DIRS = (LARGE_RESULTS_DIR, HISTORY_DIR)
NO_PROFILE = FULL


def with_scratch_routes(backend: Backend) -> Backend:
    """Make sure offloaded results and evicted inputs have somewhere to go.

    Unless the caller routed them already, `/large_tool_results/` and
    `/conversation_history/` live in the thread's state.
    """
    if isinstance(backend, CompositeBackend):
        routed = {prefix for prefix, _ in backend.routes}
        missing = {d: StateBackend(d) for d in SCRATCH_DIRS if d not in routed}
        if not missing:
            return backend
        return CompositeBackend(backend.default, {**dict(backend.routes), **missing})
    return CompositeBackend(backend, {d: StateBackend(d) for d in SCRATCH_DIRS})


def assemble(
    builtins: list[Middleware], caller: Sequence[Middleware], insert_at: int
) -> list[Middleware]:
    """Caller middleware replaces a built-in of the same name in place; the rest is
    inserted at `insert_at` (after the core, before the tail). Built-ins cannot be dropped."""
    stack = list(builtins)
    by_name = {m.name: i for i, m in enumerate(stack)}
    extra = []
    for m in caller:
        if m.name in by_name:
            stack[by_name[m.name]] = m
        else:
            extra.append(m)
    return stack[:insert_at] + extra + stack[insert_at:]


def _tail(
    model: BaseChatModel,
    backend: Backend,
    interrupt_on: dict | None,
    planning: bool,
    profile: HarnessProfile,
    memory: MemoryMiddleware | None = None,
    caching: bool = True,
) -> list[Middleware]:
    tail: list[Middleware] = []
    if profile.excluded_tools or profile.tool_descriptions:
        tail.append(ProfileMiddleware(profile))  # the tools offered, as the profile says
    if interrupt_on:
        tail.append(EditPreflightMiddleware(backend))  # an edit that cannot apply is not asked
        # Approval, innermost so it asks just before the tool runs (one interrupt per call).
        tail.append(HumanInTheLoopMiddleware(interrupt_on, interrupt_mode="per_call"))
    if planning and profile.offers(WRITE_TODOS):
        # write_todos: a task list the editor shows as a plan
        tail.append(
            TodoListMiddleware(system_prompt=PLAN_PROMPT, tool_description=PLAN_TOOL_DESCRIPTION)
        )
    # Prompt caching marks the prompt as it stands here as the stable, cached prefix; memory,
    # which can change between calls, is appended after it.
    if caching:
        tail.extend(caching_middleware(model))
    if memory is not None:
        tail.append(memory)
    return tail


def _extra(profile: HarnessProfile) -> list[Middleware]:
    """The profile's own middleware, made fresh for each agent."""
    return [make() for make in profile.middleware]


def _compile(
    model: BaseChatModel,
    tools: Sequence[Any],
    prompt: str,
    core: list[Middleware],
    caller: Sequence[Middleware],
    tail: list[Middleware],
    **kwargs: Any,
) -> Any:
    """Core, then the caller's middleware, then the tail (context, approval, planning)."""
    stack = assemble(core + tail, caller, insert_at=len(core))
    return create_agent(
        model,
        list(tools),
        system_prompt=prompt,
        middleware=stack,
        state_schema=DeepAgentState,
        **kwargs,
    )


def _prompt(system_prompt: str | None, profile: HarnessProfile) -> str:
    harness = profile.base_prompt or BASE_PROMPT
    base = harness if system_prompt is None else f"{system_prompt}\n\n{harness}"
    return f"{base}\n{profile.prompt_suffix}" if profile.prompt_suffix else base


def model_spec(model: BaseChatModel) -> str | None:
    """`provider:model` of a chat model, as it reports itself to tracing (None if unknown)."""
    try:
        params = model._get_ls_params()
    except Exception:
        return None
    provider, name = params.get("ls_provider"), params.get("ls_model_name")
    return f"{provider}:{name}" if provider and name else None


def _hooks(runner: HookRunner | None) -> list[Middleware]:
    return [HooksMiddleware(runner)] if runner is not None else []


def _child_core(backend: Backend, retry: RetryPolicy | None) -> list[Middleware]:
    """A child's core stack: the agent's, without delegation."""
    return [
        ReadableErrorsMiddleware(),
        FilesystemMiddleware(backend),
        SummarizationMiddleware(backend),
        PatchToolCallsMiddleware(),
        RedactSecretsMiddleware(),
        ThoughtOnlyRepliesMiddleware(),
        ToolLoopMiddleware(),
        TruncatedCallsMiddleware(),
        RetryMiddleware(retry),
        RepetitionGuardMiddleware(),
        UsageMiddleware(),
    ]


def _grader(
    model: BaseChatModel,
    backend: Backend,
    interrupt_on: dict | None,
    caching: bool,
    profile: HarnessProfile,
    retry: RetryPolicy | None,
    hooks: HookRunner | None,
) -> Any:
    """The goal grader: a child that reads and runs commands, through the same backend and
    approval gate as the agent, and is not offered the tools that change files."""
    reviewer = replace(profile, excluded_tools=profile.excluded_tools | MUTATING_FILE_TOOLS)
    return _compile(
        model,
        (),
        _prompt(GRADER_PROMPT, reviewer),
        _child_core(backend, retry),
        [*_extra(reviewer), *_hooks(hooks)],
        _tail(model, backend, interrupt_on, False, reviewer, caching=caching),
        name="goal-grader",
    )


def _children(
    specs: Sequence[SubAgent | CompiledSubAgent],
    model: BaseChatModel,
    tools: Sequence[Any],
    backend: Backend,
    interrupt_on: dict | None,
    skills: Sequence[str] | None,
    caching: bool,
    profile: HarnessProfile,
    retry: RetryPolicy | None,
    hooks: HookRunner | None,
    extra: Sequence[Middleware] = (),
) -> tuple[dict[str, Any], dict[str, str]]:
    """The children compiled, by name, and their descriptions: a general-purpose one
    unless the caller defines its own. `extra` goes into each compiled child's stack."""
    if not any(s.name == GENERAL_PURPOSE for s in specs):
        general = SubAgent(GENERAL_PURPOSE, GENERAL_PURPOSE_DESCRIPTION, GENERAL_PURPOSE_PROMPT)
        specs = [general, *specs]
    agents, descriptions = {}, {}
    for spec in specs:
        descriptions[spec.name] = spec.description
        if isinstance(spec, CompiledSubAgent):
            agents[spec.name] = spec.runnable
            continue
        child_model = spec.model or profile.subagent_model or model
        if isinstance(child_model, str):
            from deepacp.models import resolve_model

            child_model = resolve_model(child_model)
        core = _child_core(backend, retry)
        child_skills = skills if spec.skills is None else spec.skills
        context = [SkillsMiddleware(backend, child_skills)] if child_skills else []
        agents[spec.name] = _compile(
            child_model,
            tools if spec.tools is None else spec.tools,
            _prompt(spec.system_prompt, profile),
            core,
            [*_extra(profile), *spec.middleware, *_hooks(hooks), *extra],
            context + _tail(child_model, backend, interrupt_on, False, profile, caching=caching),
            name=spec.name,
        )
    return agents, descriptions


def _subagents(specs: Sequence[SubAgent | CompiledSubAgent], *args: Any) -> SubAgentMiddleware:
    """The `task` tool over the compiled children (arguments as `_children`'s)."""
    agents, descriptions = _children(specs, *args)
    compiled = {s.name for s in specs if isinstance(s, CompiledSubAgent)}
    return SubAgentMiddleware(agents, descriptions, streaming=frozenset(agents.keys() - compiled))


def _background(
    specs: Sequence[SubAgent | CompiledSubAgent],
    runner: BackgroundRunner,
    model: BaseChatModel,
    tools: Sequence[Any],
    backend: Backend,
    interrupt_on: dict | None,
    rest: tuple[Sequence[str] | None, bool, HarnessProfile, RetryPolicy | None, HookRunner | None],
) -> BackgroundTasksMiddleware:
    """The background-task tools over the declarative children, compiled without the
    approval gate: what it would ask about is refused instead (nobody is there to ask),
    and what the agent sends a running task reaches it through its inbox. `rest`:
    `_children`'s skills, caching, profile, retry and hooks."""
    declared = [s for s in specs if isinstance(s, SubAgent)]
    extra = [RefuseApprovalsMiddleware(interrupt_on or {}), InboxMiddleware(runner.inbox)]
    agents, descriptions = _children(declared, model, tools, backend, None, *rest, extra=extra)
    return BackgroundTasksMiddleware(agents, descriptions, runner)


def create_deep_agent(
    model: str | BaseChatModel,
    tools: Sequence[Any] = (),
    *,
    system_prompt: str | None = None,
    middleware: Sequence[Middleware] = (),
    subagents: Sequence[SubAgent | CompiledSubAgent] = (),
    memory: Sequence[str] | None = None,
    skills: Sequence[str] | None = None,
    backend: Backend | None = None,
    interrupt_on: dict[str, bool | InterruptOnConfig] | None = None,
    permissions: Sequence[PermissionRule | CommandRule] = (),
    checkpointer: Any = None,
    store: Any = None,
    planning: bool = False,
    prompt_caching: bool = True,
    profile: HarnessProfile | None = None,
    name: str | None = None,
    retry: RetryPolicy | None = None,
    hooks: HookRunner | None = None,
    goal: str | GoalSource | None = None,
    goal_rounds: int = DEFAULT_GOAL_ROUNDS,
    background: BackgroundRunner | None = None,
    verify: bool = True,
) -> Any:
    """Build a deep agent on LangChain's agent loop: file tools over `backend`, sub-agents,
    summarization, history repair, the caller's middleware, skills, memory and approvals.
    Returns the compiled LangGraph graph; run it with `ainvoke` / `astream` (the tools are
    async), with a `thread_id` when checkpointed.

    - `model`: a chat model or a spec string (see `deepacp.models.resolve_model`).
    - `backend`: defaults to a `StateBackend` (files in the thread's state).
    - `subagents`: declarative or compiled sub-agents, besides the automatic
      `general-purpose` one; they share the backend and `interrupt_on`.
    - `memory`, `skills`: AGENTS.md files and skill folders, as backend paths
      (workspace-relative, or routed such as `/user/AGENTS.md`).
    - `permissions`: path and command rules enforced in the backend layer
      (see `deepacp.backends.permissions`).
    - `planning`: adds `write_todos` (LangChain's TodoListMiddleware), shown as a plan.
    - `prompt_caching`: ask Anthropic and OpenAI models to cache the stable prompt prefix
      (see `deepacp.harness.middleware.caching`).
    - `profile`: how the harness adapts to the model (see `deepacp.harness.profiles`);
      None looks it up from the model's spec, `HarnessProfile("default")` uses none.
    - `retry`: how model calls that failed for a passing reason are retried (also the
      sub-agents'); see `deepacp.harness.middleware.retry`.
    - `hooks`: runs the user's hooks on the tool events of the agent and its sub-agents
      (see `deepacp.harness.middleware.hooks`).
    - `goal`: what done looks like (or a callable reading it at each check): before the
      agent ends a turn, a grader checks the work against it, at most `goal_rounds` times
      a turn (see `deepacp.harness.middleware.goal`).
    - `background`: where background sub-agents run; with one, the agent gets the
      background-task tools (see `deepacp.harness.middleware.background`; runners in
      `deepacp.harness.background`).
    - `verify`: before a turn that changed files ends, ask the model once to run the
      project's checks (see `deepacp.harness.middleware.verify`), unless the profile
      says not to.
    """
    spec = model if isinstance(model, str) else None
    if isinstance(model, str):
        from deepacp.models import resolve_model

        model = resolve_model(model)
    if profile is None:
        spec = spec or model_spec(model)
        profile = (profile_for(spec) if spec else None) or NO_PROFILE
    backend = with_scratch_routes(backend or StateBackend())
    if permissions:
        backend = PermissionBackend(backend, permissions)
        interrupt_on = merge_gates(interrupt_on or {}, approval_gates(backend))

    # The stack, outermost first. Each entry is one concern:
    delegation: list[Middleware] = (
        [
            _subagents(
                subagents,
                model,
                tools,
                backend,
                interrupt_on,
                skills,
                prompt_caching,
                profile,
                retry,
                hooks,
            )
        ]
        if profile.offers(TASK)
        else []
    )
    # Background tasks are delegation too: a profile without `task` goes without them.
    if background is not None and profile.offers(TASK) and profile.offers(START_BACKGROUND_TASK):
        rest = (skills, prompt_caching, profile, retry, hooks)
        delegation.append(
            _background(subagents, background, model, tools, backend, interrupt_on, rest)
        )
    core: list[Middleware] = [
        ReadableErrorsMiddleware(),  # a wrong key, model or URL, an overflow: one line to fix
        FilesystemMiddleware(backend),  # file tools, large-result offload, same-path guard
        *delegation,  # the task tool, and the background tasks
        SummarizationMiddleware(backend),  # non-destructive: an event + a view, log kept whole
        PatchToolCallsMiddleware(),  # answer tool calls left dangling by a crash or cancel
        RedactSecretsMiddleware(),  # no secret in tool results, model output or errors
        ThoughtOnlyRepliesMiddleware(),  # a reply of only thinking is left out of requests
        *([VerifyMiddleware(backend)] if verify and profile.verify else []),  # check changes
        ToolLoopMiddleware(),  # the same calls over and over: told once, then the turn ends
        TruncatedCallsMiddleware(),  # a call cut off by max_tokens is answered, never run
        RetryMiddleware(retry),  # 429 / 529 / 5xx / dropped: back off, tell the user, retry
        RepetitionGuardMiddleware(),  # a reply stuck in a loop is stopped mid-stream
        UsageMiddleware(),  # the thread's token usage, as providers report it
    ]
    if goal is not None:  # a grader checks "done" before the turn ends
        grader = _grader(model, backend, interrupt_on, prompt_caching, profile, retry, hooks)
        source = goal if callable(goal) else (lambda: goal)
        core.append(GoalMiddleware(grader, source, goal_rounds))
    # ... then the caller's middleware, then skills, approval, planning and prompt caching,
    # then memory last, so the stable prefix before it stays cacheable.
    context: list[Middleware] = []
    if skills:
        brief = not profile.skill_descriptions
        context.append(SkillsMiddleware(backend, skills, brief))  # skill names and paths
    notes = MemoryMiddleware(backend, memory, nested=True) if memory else None  # AGENTS.md
    return _compile(
        model,
        tools,
        _prompt(system_prompt, profile),
        core,
        [*_extra(profile), *middleware, *_hooks(hooks)],
        context + _tail(model, backend, interrupt_on, planning, profile, notes, prompt_caching),
        checkpointer=checkpointer,
        store=store,
        name=name,
    )


def create_background_agent(
    model: str | BaseChatModel,
    tools: Sequence[Any] = (),
    *,
    backend: Backend | None = None,
    interrupt_on: dict[str, bool | InterruptOnConfig] | None = None,
    skills: Sequence[str] | None = None,
    profile: HarnessProfile | None = None,
    retry: RetryPolicy | None = None,
    prompt_caching: bool = True,
) -> Any:
    """The general-purpose sub-agent as a background task runs on its own graph (a
    LangGraph server's `deepacp-task`): what `interrupt_on` would ask about is refused,
    since nobody is there to ask. Its input is the brief as a human message (and the
    parent's shared state); more instructions arrive as further runs on its thread."""
    if isinstance(model, str):
        from deepacp.models import resolve_model

        model = resolve_model(model)
    profile = profile or profile_for(model_spec(model) or "") or NO_PROFILE
    backend = with_scratch_routes(backend or StateBackend())
    refuse = [RefuseApprovalsMiddleware(interrupt_on or {})]
    rest = (skills, prompt_caching, profile, retry, None)
    agents, _ = _children([], model, tools, backend, None, *rest, extra=refuse)
    return agents[GENERAL_PURPOSE]
