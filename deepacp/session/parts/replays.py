"""ReplaysPart: the session's saved replay (`replays.Replays`), so a fresh process redraws
the conversation without the harness: read when it is still the thread's, saved after each
turn (off the turn's path) and as the session closes, dropped when turns are taken back."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from deepacp.events import Event, PlanUpdated
from deepacp.session.parts.base import EndedTurn, Part
from deepacp.session.replays import Replays

log = logging.getLogger(__name__)


def _shows_tasks(events: list[Event]) -> bool:
    """Whether the replay ends on background tasks (`BackgroundPart.history`): where they
    stand changes by itself, so it is never saved."""
    from deepacp.session.turns.projection import BACKGROUND_ENTRY

    last = events[-1] if events else None
    return isinstance(last, PlanUpdated) and any(
        entry.content.startswith(BACKGROUND_ENTRY) for entry in last.entries
    )


class ReplaysPart(Part):
    def __init__(self, replays: Replays | None) -> None:
        """`replays`: where they are kept (None: this session's are not, see `lifecycle`)."""
        self.replays = replays
        self._key: dict[str, Any] | None = None
        self._saving: asyncio.Task[None] | None = None
        self._ran = False

    def key(self) -> dict[str, Any] | None:
        if self.replays is None:
            return None
        return self.replays.key(self.ctx.record.thread_id, self.ctx.roots)

    async def saved_history(self) -> list[Event] | None:
        self._key = key = self.key()
        return None if self.replays is None else self.replays.read(self.ctx.id, key)

    async def history(self, events: list[Event]) -> list[Event]:
        if self.replays is not None and not _shows_tasks(events) and self._key == self.key():
            self.replays.save(self.ctx.id, self._key, events)  # no turn wrote meanwhile
        return events

    async def save(self) -> None:
        """Save the replay for the next process, if the conversation changed since."""
        if self.replays is None or self.replays.is_saved(self.ctx.id, self.key()):
            return
        try:
            await self.ctx.history()
        except Exception:  # the next load reads it the long way
            log.debug("replay of session %s not saved", self.ctx.id, exc_info=True)

    async def turn_ended(self, turn: EndedTurn) -> None:
        self._ran = True
        if self.replays is not None and (self._saving is None or self._saving.done()):
            self._saving = asyncio.create_task(self.save())  # after the response, not before

    async def taken_back(self, message_ids: set[str]) -> None:
        self._forget()

    async def cleared(self) -> None:
        self._forget()

    def _forget(self) -> None:
        if self.replays is not None:
            self.replays.forget(self.ctx.id)

    async def closed(self) -> None:
        if self._saving is not None:
            await asyncio.gather(self._saving, return_exceptions=True)
        if self._ran:
            await self.save()
