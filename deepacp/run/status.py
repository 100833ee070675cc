"""The live status line `deepacp run` keeps on a terminal's stderr while it waits:
starting, thinking, running a tool; erased before anything else is printed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from typing import TextIO

from deepacp.events import (
    Event,
    MessageChunk,
    ThoughtChunk,
    ToolFinished,
    ToolOutput,
    ToolRunning,
    ToolStarted,
)

ERASE = "\r\x1b[K"
TICK_SECONDS = 1.0


def waiting_for(event: Event, titles: dict[str, str], now: str | None) -> str | None:
    """What the run waits for after `event` (None: nothing to show, output is streaming)."""
    if isinstance(event, ToolStarted):
        titles[event.tool_call_id] = event.title
        return f"waiting to run {event.title}"
    if isinstance(event, ToolRunning):
        return f"running {titles.get(event.tool_call_id, 'a tool')}"
    if isinstance(event, ToolFinished):
        return "thinking"
    if isinstance(event, MessageChunk | ThoughtChunk | ToolOutput):
        return None
    return now


class StatusLine:
    """One line on a terminal, redrawn each second with the time spent waiting."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() and os.environ.get("TERM") != "dumb"
        self.text: str | None = None
        self.since = time.monotonic()
        self.drawn = False
        self.titles: dict[str, str] = {}
        self._ticker: asyncio.Task | None = None

    def show(self, text: str | None) -> None:
        """Wait for `text` from now on (None: show nothing)."""
        if text != self.text:
            self.text, self.since = text, time.monotonic()
        self.draw()

    def after(self, event: Event, may_draw: bool) -> None:
        """Follow `event`; drawn only when `may_draw` (no half-printed line to spoil)."""
        self.text = waiting_for(event, self.titles, self.text)
        self.since = time.monotonic()
        if may_draw:
            self.draw()

    def draw(self) -> None:
        if not self.enabled or self.text is None:
            return
        waited = int(time.monotonic() - self.since)
        shown = f"{self.text}… {waited}s" if waited else f"{self.text}…"
        self.stream.write(f"{ERASE}{shown}")
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        """Erase the line (before anything else is printed)."""
        if self.drawn:
            self.stream.write(ERASE)
            self.stream.flush()
            self.drawn = False

    def start(self) -> None:
        if self.enabled:
            self._ticker = asyncio.create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_SECONDS)
            if self.drawn:
                self.draw()

    async def stop(self) -> None:
        self.clear()
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
