"""A turn's background tasks: stopped when the user cancels the turn or rewinds past it,
the card of the call that started each (and a notice) saying so."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection
from typing import TYPE_CHECKING

from deepacp.events import Event, Notice, ToolFinished
from deepacp.session.handler import SessionHandler

if TYPE_CHECKING:  # the harness loads with the first turn, not with the session
    from deepacp.harness.background import InProcessTasks

log = logging.getLogger(__name__)

CANCELLED = "the turn that started it was cancelled"
REWOUND = "the turn that started it was taken back by a rewind"


async def stop_turn_tasks(
    runner: InProcessTasks | None,
    prompts: Collection[str | None],
    why: str,
    handler: SessionHandler,
) -> None:
    """Stop the background tasks the turns of `prompts` started (`runner`: the session's,
    None when it has none yet) and tell the user which, and why."""
    if runner is None:
        return
    stopped = await runner.stop(prompts, why)
    for task_id, started in stopped.items():
        log.info("stopped background task %s: %s", task_id, why)
        events: list[Event] = [Notice(f"Stopped background task {task_id}: {why}.")]
        if started.call_id is not None:
            text = f"Started background task {task_id}; stopped: {why}."
            events.insert(0, ToolFinished(started.call_id, "completed", text))
        for event in events:
            with contextlib.suppress(Exception):  # the face may be gone; the tasks stopped
                await handler.emit(event)
