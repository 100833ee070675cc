"""Command slots: how many of a shell's commands run at once, and the share of them that
background work may hold, so a command of the user's turn always finds a slot free."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar

in_background: ContextVar[bool] = ContextVar("deepacp_in_background", default=False)
"""True while a background task works (set by the task's runner, in the task's own context):
its commands take a background slot, and what it changes between turns is kept in the last
restore point (`deepacp.session.restore`)."""


class CommandSlots:
    """At most `total` commands at once, of which at most `background` are background work's.

    A background command waits for a background slot first, then for a slot; a foreground
    one waits for a slot only, so `total - background` slots are never held by background
    work."""

    def __init__(self, total: int, background: int) -> None:
        if not 0 < background < total:
            raise ValueError(f"background slots must be between 1 and {total - 1}")
        self._all = asyncio.Semaphore(total)
        self._background = asyncio.Semaphore(background)

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Hold a slot (and a background one, in background work) while the block runs."""
        async with contextlib.AsyncExitStack() as stack:
            if in_background.get():
                await stack.enter_async_context(self._background)
            await stack.enter_async_context(self._all)
            yield
