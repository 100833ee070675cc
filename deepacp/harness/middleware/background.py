"""BackgroundTasksMiddleware: sub-agents that work while the agent goes on.

`start_background_task` starts a sub-agent and answers at once with the task's id; the
agent ends its turn or does other work, and `check_background_task` later gives the
sub-agent's report — once, in full; a later check only says it was delivered, so the
context stays small. `update_background_task` sends a running task more instructions (it
reads them before its next model call), `cancel_background_task` stops one and
`list_background_tasks` shows them all.

The task records live in the thread's state (`background_tasks`, merged by id), so they
are checkpointed with the thread; where the work runs is a `BackgroundRunner`'s business
(see `deepacp.harness.background`). A background task cannot stop to ask the user: its
sub-agents are compiled without the approval gate and with `RefuseApprovalsMiddleware`
in its place (see `graph.py`). The parent's mode and "always" answers still decide what
needs asking.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, ToolException
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from deepacp.harness.background import (
    BACKGROUND_KEY,
    LOST,
    BackgroundRunner,
    TaskRecord,
    TaskRefused,
    merge_tasks,
    shown_status,
)
from deepacp.harness.messages import CARD_TEXT
from deepacp.harness.middleware.subagents import TaskArgs, child_input
from deepacp.harness.names import (
    CANCEL_BACKGROUND_TASK,
    CHECK_BACKGROUND_TASK,
    LIST_BACKGROUND_TASKS,
    START_BACKGROUND_TASK,
    UPDATE_BACKGROUND_TASK,
)
from deepacp.harness.usage import USAGE_KEY


class BackgroundState(AgentState):
    background_tasks: NotRequired[Annotated[dict[str, TaskRecord], merge_tasks]]


class TaskIdArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    task_id: str = Field(description="The task's id.")
    runtime: ToolRuntime


class UpdateArgs(TaskIdArgs):
    message: str = Field(description="The instructions, complete in themselves.")


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


def _answer(
    runtime: ToolRuntime, name: str, text: str, card: str | None = None, **update: Any
) -> Command:
    """The tool's result: `text` for the model, `card` for the user's card (None: the same)."""
    extra = {CARD_TEXT: card} if card is not None else {}
    message = ToolMessage(
        text, tool_call_id=runtime.tool_call_id or "", name=name, additional_kwargs=extra
    )
    return Command(update={"messages": [message], **update})


def start_description(agents: Mapping[str, str]) -> str:
    return (
        "Run a sub-agent (as for task) in the background and go on at once; answers with the "
        "task's id. It cannot ask the user: what needs approval is refused."
    )


class BackgroundTasksMiddleware(AgentMiddleware):
    """The background-task tools over `agents` (compiled for background use), run by
    `runner`."""

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
            tool(start, START_BACKGROUND_TASK, start_description(descriptions), TaskArgs),
            tool(
                check,
                CHECK_BACKGROUND_TASK,
                "A background task's status; once finished, its report (given once).",
                TaskIdArgs,
            ),
            tool(
                update,
                UPDATE_BACKGROUND_TASK,
                "Send a running background task more instructions for its next step.",
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
        payload = child_input(runtime.state or {}, brief)
        try:
            await self.runner.start(task_id, agent, payload, runtime.tool_call_id)
        except TaskRefused as refused:
            raise ToolException(str(refused)) from None
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
        card = f"Started background task {task_id}: it works on its own while the agent goes on."
        update = {BACKGROUND_KEY: {task_id: record}}
        return _answer(runtime, START_BACKGROUND_TASK, text, card, **update)

    async def _check(self, task_id: str, runtime: ToolRuntime) -> Command:
        record = self._record(task_id, runtime)
        name = CHECK_BACKGROUND_TASK
        if record.get("delivered"):
            status = record.get("status", "")
            if status != "finished":
                return _answer(runtime, name, f"Background task {task_id} {status}.")
            said = f"Background task {task_id} finished; its report was given to"
            return _answer(runtime, name, f"{said} you already.", f"{said} the agent already.")
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
        elif outcome.report:  # stopped with the turn that started it
            text = f"Background task {task_id} was stopped: {outcome.report}."
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
            update: dict[str, Any] = {
                BACKGROUND_KEY: {task_id: TaskRecord(status="cancelled", delivered=True)}
            }
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
