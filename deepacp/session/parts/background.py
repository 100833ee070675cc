"""BackgroundPart: the session's background tasks (`deepacp.harness.background`), run in
this process (on a LangGraph server they are the server's threads, and this part only
shows them). A task that ends shows in the plan once no turn runs; the tasks a turn started
stop when the user cancels that turn or rewinds past it, and the card that started each
says so."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection
from typing import Any

from deepacp.events import Event, Notice, PlanEntry, PlanUpdated, ToolFinished
from deepacp.session.assembly import Contributions
from deepacp.session.parts.base import EndedTurn, Part, PromptStart

log = logging.getLogger(__name__)

CANCELLED = "the turn that started it was cancelled"
REWOUND = "the turn that started it was taken back by a rewind"


class BackgroundPart(Part):
    def __init__(self, offered: bool = True, here: bool = True) -> None:
        """`offered`: the agent may start tasks in this process (not in a process that
        ends with its one prompt, nor in an edit that leaves nothing behind); `here`: the
        thread runs in this process."""
        self.offered = offered
        self.here = here
        self.runner: Any = None
        """The `InProcessTasks` (made with the first graph: it outlives a rebuilt one)."""
        self._prompt: str | None = None
        self._ended = False
        """A task ended that the editor's plan does not show yet."""

    def status(self, task_id: str) -> Any:
        if self.runner is not None:
            return self.runner.status(task_id)
        return "lost" if self.here else None  # none of its tasks runs in this process

    async def contribute(self, parts: Contributions) -> None:
        if self.runner is None and self.offered and self.here:
            from deepacp.harness import InProcessTasks

            self.runner = InProcessTasks(self._task_ended, lambda: self._prompt)
        parts.background, parts.task_status = self.runner, self.status

    async def plan(self) -> tuple[PlanEntry, ...]:
        """The plan as the thread's state has it: the task list, then the background tasks
        (each as its runner knows it now)."""
        from deepacp.harness import BACKGROUND_KEY
        from deepacp.session.turns import cards, projection

        config, host = self.ctx.config, self.ctx.host
        todos, tasks = await host.value(config, "todos"), await host.value(config, BACKGROUND_KEY)
        entries = projection.background_entries(tasks, self.status)
        return (*cards.plan_of(todos).entries, *entries)

    async def history(self, events: list[Event]) -> list[Event]:
        from deepacp.session.turns.projection import BACKGROUND_ENTRY

        plan = await self.plan()
        if any(entry.content.startswith(BACKGROUND_ENTRY) for entry in plan):
            return [*events, PlanUpdated(plan)]  # where they stand now: never saved
        return events

    async def prompt_started(self, prompt: PromptStart) -> None:
        self._prompt = prompt.message_id

    async def _task_ended(self, task_id: str) -> None:
        self._ended = True
        await self._show_ended()

    async def _show_ended(self) -> None:
        """Show the editor the tasks that ended, once no turn runs (a running turn takes
        its plan from the thread's state, which has not heard yet)."""
        if self._ended and not self.ctx.turns.busy and self.runner is not None:
            self._ended = False
            try:
                await self.ctx.handler.emit(PlanUpdated(await self.plan()))
            except Exception:
                log.exception("could not show the background tasks of session %s", self.ctx.id)

    async def turn_ended(self, turn: EndedTurn) -> None:
        if turn.stop == "cancelled":
            await self._stop(turn.message_ids, CANCELLED)
        await self._show_ended()

    async def taken_back(self, message_ids: set[str]) -> None:
        await self._stop(message_ids, REWOUND)

    async def _stop(self, prompts: Collection[str], why: str) -> None:
        """Stop the tasks the turns of `prompts` started, and tell the user which, and why."""
        if self.runner is None:
            return
        stopped = await self.runner.stop(prompts, why)
        for task_id, started in stopped.items():
            log.info("stopped background task %s: %s", task_id, why)
            events: list[Event] = [Notice(f"Stopped background task {task_id}: {why}.")]
            if started.call_id is not None:
                text = f"Started background task {task_id}; stopped: {why}."
                events.insert(0, ToolFinished(started.call_id, "completed", text))
            for event in events:
                with contextlib.suppress(Exception):  # the face may be gone; the tasks stopped
                    await self.ctx.handler.emit(event)

    async def closed(self) -> None:
        if self.runner is not None:
            await self.runner.close()  # its tasks end with the session
