"""Background tasks: what a thread remembers of each (`TaskRecord`, merged by id), and
where they run — a `BackgroundRunner`. `InProcessTasks` runs each as an asyncio task of
this process (so a task that was running when its session closed or deepacp stopped is
`lost`, truthfully); `deepacp.session.hosts.server_tasks.ServerTasks` runs each on the
LangGraph server the harness runs on. The tools over them are in
`deepacp.harness.middleware.background`."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from deepacp.backends.slots import in_background
from deepacp.backends.state import FilesUpdate
from deepacp.harness.middleware.subagents import files_delta, final_report
from deepacp.harness.names import MUTATING_FILE_TOOLS
from deepacp.harness.usage import USAGE_KEY

TaskStatus = Literal["running", "finished", "failed", "cancelled", "lost"]
BACKGROUND_KEY = "background_tasks"
RECURSION_LIMIT = 1000
MAX_RUNNING_TASKS = 4
"""Background tasks running at once in a session; a start beyond it is refused. Their
commands share `MAX_BACKGROUND_COMMANDS` of the command slots (`deepacp.backends.slots`)."""
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


def shown_status(record: TaskRecord, live: Callable[[str], TaskStatus | None]) -> TaskStatus:
    """A task's status: the record's once it ended, else what its runner knows now."""
    status = record.get("status", "running")
    if status != "running":
        return status
    return live(record.get("id", "")) or status


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


class TaskRefused(Exception):
    """A task this runner will not start now, said in one line for the model."""


class BackgroundRunner(Protocol):
    """Where background tasks run."""

    async def start(
        self, task_id: str, agent: Any, payload: dict[str, Any], call_id: str | None = None
    ) -> None:
        """Start the task (`call_id`: the tool call that starts it), or `TaskRefused`."""
        ...

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


@dataclass(frozen=True)
class Started:
    """Where a task came from: the prompt whose turn started it (its restore point's message
    id; None: not known) and the tool call that did."""

    prompt: str | None
    call_id: str | None


class InProcessTasks:
    """Background tasks as asyncio tasks of this process, owned by one session.

    Each runs in a fresh context (not inside the tool call that started it, which ends
    at once), marked as background work (`in_background`). At most `MAX_RUNNING_TASKS` run
    at once. `on_end` is awaited once a task has ended by itself or was stopped with its
    turn (not when the agent cancelled it), so the session can show it. `prompt` names the
    prompt whose turn is running, so a cancel or rewind can stop that turn's tasks.
    """

    def __init__(
        self,
        on_end: Callable[[str], Awaitable[None]] | None = None,
        prompt: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.on_end = on_end
        self.prompt = prompt
        self._tasks: dict[str, asyncio.Task[Outcome]] = {}
        self._inboxes: dict[str, list[str]] = {}
        self._telling: set[asyncio.Task[None]] = set()
        self._started: dict[str, Started] = {}
        self._stopped: dict[str, str] = {}
        """Tasks stopped with their turn: why."""

    def running(self) -> int:
        return sum(not task.done() for task in self._tasks.values())

    async def start(
        self, task_id: str, agent: Any, payload: dict[str, Any], call_id: str | None = None
    ) -> None:
        if self.running() >= MAX_RUNNING_TASKS:  # no await before the task is counted
            raise TaskRefused(
                f"not started: {MAX_RUNNING_TASKS} background tasks are running, the most a "
                "session runs at once; wait for one to finish (check_background_task) or "
                "cancel one, or do this work yourself"
            )
        self._inboxes[task_id] = []
        self._started[task_id] = Started(self.prompt(), call_id)
        run = self._run(task_id, agent, payload)
        task = asyncio.create_task(run, context=contextvars.Context())
        self._tasks[task_id] = task
        task.add_done_callback(lambda done: self._ended(task_id, done))

    def _ended(self, task_id: str, task: asyncio.Task[Outcome]) -> None:
        if self.on_end is None or (task.cancelled() and task_id not in self._stopped):
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
        in_background.set(True)
        try:
            final = await agent.ainvoke(payload, {"recursion_limit": RECURSION_LIMIT})
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            outcome = Outcome("failed", f"the sub-agent failed: {type(exc).__name__}: {exc}")
        else:
            final = final if isinstance(final, Mapping) else {}
            outcome = outcome_of(final, files_delta(payload.get("files"), final.get("files")))
        if unread := self._inboxes.get(task_id):  # it ended before its next model call
            said = "; ".join(unread)
            note = f"\n\n(It ended before it read what you sent it: {said})"
            outcome = dataclasses.replace(outcome, report=outcome.report + note)
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
        if task.cancelled():
            return Outcome("cancelled", self._stopped.get(task_id, ""))
        return task.result()

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

    async def stop(self, prompts: Collection[str | None], why: str) -> dict[str, Started]:
        """Cancel the running tasks the turns of `prompts` started, saying `why` to whoever
        checks them; the ones stopped, and where each came from."""
        stopped = {
            task_id: started
            for task_id, started in self._started.items()
            if started.prompt is not None
            and started.prompt in prompts
            and not self._tasks[task_id].done()
        }
        for task_id in stopped:
            self._stopped[task_id] = why
            self._tasks[task_id].cancel()
        await asyncio.gather(*(self._tasks[t] for t in stopped), return_exceptions=True)
        return stopped

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
