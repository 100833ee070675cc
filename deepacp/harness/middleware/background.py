"""BackgroundTasksMiddleware: sub-agents that work while the agent goes on.

`start_background_task` starts a sub-agent and answers at once with the task's id; the
agent ends its turn or does other work, and `check_background_task` later gives the
sub-agent's report — once, in full; a later check only says it was delivered, so the
context stays small. `update_background_task` sends a running task more instructions (it
reads them before its next model call), `cancel_background_task` stops one and
`list_background_tasks` shows them all.

The task records live in the thread's state (`background_tasks`, merged by id), so they
are checkpointed with the thread. Where the work runs is a `BackgroundRunner`'s business:
`InProcessTasks` runs each as an asyncio task of this process, so a task that was running
when deepacp stopped is reported `lost`, truthfully, and can be started again.

A background task cannot stop to ask the user: its sub-agents are compiled without the
approval gate and with `RefuseApprovalsMiddleware` in its place, so a call that would be
asked about is refused inside the task with an error the sub-agent reads — never run
unasked. The parent's mode and "always" answers still decide what needs asking.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Protocol, TypedDict

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from deepacp.backends.state import FilesUpdate
from deepacp.harness.middleware.subagents import child_input, files_delta, final_report
from deepacp.harness.names import (
    CANCEL_BACKGROUND_TASK,
    CHECK_BACKGROUND_TASK,
    LIST_BACKGROUND_TASKS,
    MUTATING_FILE_TOOLS,
    START_BACKGROUND_TASK,
    UPDATE_BACKGROUND_TASK,
)
from deepacp.harness.usage import USAGE_KEY

TaskStatus = Literal["running", "finished", "failed", "cancelled", "lost"]
BACKGROUND_KEY = "background_tasks"
RECURSION_LIMIT = 1000
NO_APPROVAL = (
    "Refused: background tasks cannot ask for approval (or ask the user anything), and "
    "{name} would ask here. Do not retry it; report that it needs doing in the foreground, "
    "where the user can answer."
)
LOST = (
    "It stopped when its session closed or deepacp restarted, and its work was not kept; "
    "start it again if it is still needed."
)


class TaskRecord(TypedDict, total=False):
    """What the thread remembers of a background task (plain values: checkpointed)."""

    id: str
    description: str
    subagent_type: str
    status: TaskStatus
    delivered: bool
    """Its outcome was given to the agent (it is not given twice)."""


def merge_tasks(
    left: dict[str, TaskRecord] | None, right: Mapping[str, TaskRecord] | None
) -> dict[str, TaskRecord]:
    """The `background_tasks` reducer: an update's fields replace a record's, by id."""
    merged = dict(left or {})
    for task_id, record in (right or {}).items():
        merged[task_id] = {**merged.get(task_id, {}), **record}
    return merged


class BackgroundState(AgentState):
    background_tasks: NotRequired[Annotated[dict[str, TaskRecord], merge_tasks]]


@dataclass(frozen=True)
class Outcome:
    """Where a task stands, and what it left when it ended."""

    status: TaskStatus
    report: str = ""
    changed: tuple[str, ...] = ()
    """The files its sub-agent wrote, edited or deleted."""
    files: FilesUpdate | None = None
    """Its changes to state-held files, as an update for the parent."""
    usage: Any = None


class BackgroundRunner(Protocol):
    """Where background tasks run."""

    async def start(self, task_id: str, agent: Any, payload: dict[str, Any]) -> None: ...

    async def outcome(self, task_id: str) -> Outcome:
        """`lost` for a task this runner cannot find."""
        ...

    async def send(self, task_id: str, message: str) -> bool:
        """Queue a message for the running task; False when it is not running."""
        ...

    async def cancel(self, task_id: str) -> bool:
        """Stop the task; False when it was not running."""
        ...

    def status(self, task_id: str) -> TaskStatus | None:
        """The task's status as last known here, without waiting (None: not known)."""
        ...

    async def inbox(self) -> Sequence[BaseMessage]:
        """What arrived for the task the calling sub-agent runs (the child's inbox)."""
        ...


_running_task: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "deepacp_background_task", default=None
)


def update_text(message: str) -> str:
    """A message the agent sent a running task, as the task's sub-agent reads it."""
    return f"An update from the agent that started you: {message}"


def outcome_of(final: Mapping[str, Any], files: FilesUpdate | None = None) -> Outcome:
    """A finished sub-agent's outcome, from its final state."""
    report = final_report(final)
    return Outcome(
        "finished", report, changed_files(final.get("messages", [])), files, final.get(USAGE_KEY)
    )


def changed_files(messages: Sequence[Any]) -> tuple[str, ...]:
    """The paths a sub-agent's successful write, edit and delete calls named, in order."""
    failed = {
        m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.status == "error"
    }
    paths: dict[str, None] = {}
    for message in messages:
        for call in message.tool_calls if isinstance(message, AIMessage) else ():
            if call["name"] in MUTATING_FILE_TOOLS and call["id"] not in failed:
                paths.setdefault(str((call.get("args") or {}).get("file_path")), None)
    return tuple(paths)


class InProcessTasks:
    """Background tasks as asyncio tasks of this process, owned by one session.

    Each runs in a fresh context (not inside the tool call that started it, which ends
    at once). `on_end` is awaited once a task has ended by itself (not when cancelled),
    so the session can show it.
    """

    def __init__(self, on_end: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.on_end = on_end
        self._tasks: dict[str, asyncio.Task[Outcome]] = {}
        self._inboxes: dict[str, list[str]] = {}
        self._telling: set[asyncio.Task[None]] = set()

    async def start(self, task_id: str, agent: Any, payload: dict[str, Any]) -> None:
        self._inboxes[task_id] = []
        run = self._run(task_id, agent, payload)
        task = asyncio.create_task(run, context=contextvars.Context())
        self._tasks[task_id] = task
        task.add_done_callback(lambda done: self._ended(task_id, done))

    def _ended(self, task_id: str, task: asyncio.Task[Outcome]) -> None:
        if self.on_end is None or task.cancelled():
            return
        telling = asyncio.ensure_future(self._tell(task_id))
        self._telling.add(telling)
        telling.add_done_callback(self._telling.discard)

    async def _tell(self, task_id: str) -> None:
        if self.on_end is not None:
            with contextlib.suppress(Exception):
                await self.on_end(task_id)

    async def _run(self, task_id: str, agent: Any, payload: dict[str, Any]) -> Outcome:
        _running_task.set(task_id)
        try:
            final = await agent.ainvoke(payload, {"recursion_limit": RECURSION_LIMIT})
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            outcome = Outcome("failed", f"the sub-agent failed: {type(exc).__name__}: {exc}")
        else:
            final = final if isinstance(final, Mapping) else {}
            outcome = outcome_of(final, files_delta(payload.get("files"), final.get("files")))
        return outcome

    def status(self, task_id: str) -> TaskStatus | None:
        task = self._tasks.get(task_id)
        if task is None:
            return "lost"
        if not task.done():
            return "running"
        return "cancelled" if task.cancelled() else task.result().status

    async def outcome(self, task_id: str) -> Outcome:
        task = self._tasks.get(task_id)
        if task is None:
            return Outcome("lost")
        if not task.done():
            return Outcome("running")
        return Outcome("cancelled") if task.cancelled() else task.result()

    async def send(self, task_id: str, message: str) -> bool:
        if self.status(task_id) != "running":
            return False
        self._inboxes[task_id].append(message)
        return True

    async def cancel(self, task_id: str) -> bool:
        task = self._tasks.get(task_id)
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def inbox(self) -> Sequence[BaseMessage]:
        task_id = _running_task.get()
        arrived = self._inboxes.get(task_id or "", [])
        if not arrived:
            return []
        messages, arrived[:] = list(arrived), []
        return [HumanMessage(update_text(m)) for m in messages]

    async def close(self) -> None:
        """Cancel every task still running and wait until each has stopped."""
        running = [t for t in self._tasks.values() if not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


class RefuseApprovalsMiddleware(AgentMiddleware):
    """In a background task: refuse, with an error the sub-agent reads, each call the
    approval gate (`interrupt_on`) would ask the user about; there is nobody to ask."""

    name = "RefuseApprovalsMiddleware"

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


class StartArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    description: str = Field(
        description="A complete, self-contained brief: the goal, what you already know, and "
        "what to report back. The sub-agent sees nothing else."
    )
    subagent_type: str = Field(description="Which sub-agent to use (see the tool description).")
    runtime: ToolRuntime


class TaskIdArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    task_id: str = Field(description="The id start_background_task answered with.")
    runtime: ToolRuntime


class UpdateArgs(TaskIdArgs):
    message: str = Field(description="More instructions for the task, complete in themselves.")


class ListArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    runtime: ToolRuntime


def task_id_for(call_id: str | None, taken: Mapping[str, Any]) -> str:
    """A short id for the task a tool call starts, from the call's id, unique here."""
    tail = re.sub(r"[^A-Za-z0-9]", "", call_id or "")[-8:] or "task"
    task_id, n = f"bg-{tail}", 1
    while task_id in taken:
        n += 1
        task_id = f"bg-{tail}-{n}"
    return task_id


def _records(runtime: ToolRuntime) -> dict[str, TaskRecord]:
    return dict((runtime.state or {}).get(BACKGROUND_KEY) or {})


def _answer(runtime: ToolRuntime, name: str, text: str, **update: Any) -> Command:
    message = ToolMessage(text, tool_call_id=runtime.tool_call_id or "", name=name)
    return Command(update={"messages": [message], **update})


def start_description(agents: Mapping[str, str]) -> str:
    listing = "\n".join(f"- {name}: {description}" for name, description in agents.items())
    return (
        "Start a sub-agent on a self-contained task in the background and go on at once: "
        "the answer is the task's id. Use it for long work you do not need to wait for; "
        "check it later with check_background_task. It cannot ask the user anything: what "
        "would need the user's approval is refused inside it.\n\n"
        f"Available sub-agents (subagent_type):\n{listing}"
    )


class BackgroundTasksMiddleware(AgentMiddleware):
    """The background-task tools over `agents` (compiled for background use), run by
    `runner`."""

    name = "BackgroundTasksMiddleware"
    state_schema = BackgroundState

    def __init__(
        self, agents: Mapping[str, Any], descriptions: Mapping[str, str], runner: BackgroundRunner
    ) -> None:
        super().__init__()
        self.agents = dict(agents)
        self.runner = runner

        async def start(description: str, subagent_type: str, runtime: ToolRuntime) -> Command:
            return await self._start(description, subagent_type, runtime)

        async def check(task_id: str, runtime: ToolRuntime) -> Command:
            return await self._check(task_id, runtime)

        async def update(task_id: str, message: str, runtime: ToolRuntime) -> Command:
            return await self._update(task_id, message, runtime)

        async def cancel(task_id: str, runtime: ToolRuntime) -> Command:
            return await self._cancel(task_id, runtime)

        async def listing(runtime: ToolRuntime) -> str:
            return self._list(runtime)

        def tool(coroutine: Any, name: str, description: str, schema: Any) -> StructuredTool:
            return StructuredTool.from_function(
                coroutine=coroutine,
                name=name,
                description=description,
                args_schema=schema,
                handle_tool_error=True,
            )

        self.tools = [
            tool(start, START_BACKGROUND_TASK, start_description(descriptions), StartArgs),
            tool(
                check,
                CHECK_BACKGROUND_TASK,
                "Where a background task stands; when it has finished, its report (given once).",
                TaskIdArgs,
            ),
            tool(
                update,
                UPDATE_BACKGROUND_TASK,
                "Send a running background task more instructions; it reads them before its "
                "next step.",
                UpdateArgs,
            ),
            tool(cancel, CANCEL_BACKGROUND_TASK, "Stop a running background task.", TaskIdArgs),
            tool(
                listing, LIST_BACKGROUND_TASKS, "The background tasks and their status.", ListArgs
            ),
        ]

    def _record(self, task_id: str, runtime: ToolRuntime) -> TaskRecord:
        record = _records(runtime).get(task_id)
        if record is None:
            raise ToolException(
                f"no background task {task_id!r}; list_background_tasks shows the ones there are"
            )
        return record

    async def _start(self, brief: str, subagent_type: str, runtime: ToolRuntime) -> Command:
        agent = self.agents.get(subagent_type)
        if agent is None:
            known = ", ".join(sorted(self.agents))
            raise ToolException(f"unknown subagent_type {subagent_type!r}; use one of: {known}")
        task_id = task_id_for(runtime.tool_call_id, _records(runtime))
        await self.runner.start(task_id, agent, child_input(runtime.state or {}, brief))
        record = TaskRecord(
            id=task_id,
            description=brief,
            subagent_type=subagent_type,
            status="running",
            delivered=False,
        )
        text = (
            f"Started background task {task_id}. It works on its own while you go on; call "
            f'check_background_task("{task_id}") when you need its report (checking over and '
            "over does not make it faster)."
        )
        return _answer(runtime, START_BACKGROUND_TASK, text, **{BACKGROUND_KEY: {task_id: record}})

    async def _check(self, task_id: str, runtime: ToolRuntime) -> Command:
        record = self._record(task_id, runtime)
        name = CHECK_BACKGROUND_TASK
        if record.get("delivered"):
            said = {"finished": "finished; its report was given to you already"}
            state = said.get(record.get("status", ""), record.get("status", ""))
            return _answer(runtime, name, f"Background task {task_id} {state}.")
        outcome = await self.runner.outcome(task_id)
        if outcome.status == "running":
            return _answer(runtime, name, f"Background task {task_id} is still running.")
        update: dict[str, Any] = {
            BACKGROUND_KEY: {task_id: TaskRecord(status=outcome.status, delivered=True)}
        }
        if outcome.status == "finished":
            changed = "\n".join(f"- {p}" for p in outcome.changed)
            text = f"Background task {task_id} finished. Its report:\n\n{outcome.report}"
            if changed:
                text += f"\n\nFiles it changed:\n{changed}"
            if outcome.files:
                update["files"] = outcome.files
            if outcome.usage:
                update[USAGE_KEY] = outcome.usage
        elif outcome.status == "failed":
            text = f"Background task {task_id} failed: {outcome.report}"
        elif outcome.status == "lost":
            text = f"Background task {task_id} is lost. {LOST}"
        else:
            text = f"Background task {task_id} was cancelled."
        return _answer(runtime, name, text, **update)

    async def _update(self, task_id: str, message: str, runtime: ToolRuntime) -> Command:
        record = self._record(task_id, runtime)
        if record.get("status") == "running" and await self.runner.send(task_id, message):
            text = f"Sent to background task {task_id}; it reads it before its next step."
            return _answer(runtime, UPDATE_BACKGROUND_TASK, text)
        status = self.runner.status(task_id) or record.get("status")
        raise ToolException(
            f"background task {task_id} is not running ({status}); check it, or start a new one"
        )

    async def _cancel(self, task_id: str, runtime: ToolRuntime) -> Command:
        record = self._record(task_id, runtime)
        name = CANCEL_BACKGROUND_TASK
        if record.get("status") == "running" and await self.runner.cancel(task_id):
            update = {BACKGROUND_KEY: {task_id: TaskRecord(status="cancelled", delivered=True)}}
            return _answer(runtime, name, f"Cancelled background task {task_id}.", **update)
        status = self.runner.status(task_id) or record.get("status")
        return _answer(runtime, name, f"Background task {task_id} is not running ({status}).")

    def _list(self, runtime: ToolRuntime) -> str:
        records = _records(runtime)
        if not records:
            return "No background tasks."
        lines = []
        for task_id, record in records.items():
            status = shown_status(record, self.runner.status)
            brief = " ".join(str(record.get("description", "")).split())[:80]
            lines.append(f"{task_id}: {status} — {brief}")
        return "\n".join(lines)


def shown_status(record: TaskRecord, live: Callable[[str], TaskStatus | None]) -> TaskStatus:
    """A task's status: the record's once it ended, else what its runner knows now."""
    status = record.get("status", "running")
    if status != "running":
        return status
    return live(record.get("id", "")) or status
