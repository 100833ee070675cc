"""How a summary of the thread is told as it starts and ends (`deepacp.events.Compaction`):
to the run's `custom` stream during a turn, or to whoever asked for it (`/compact`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

from deepacp.events import Compaction
from deepacp.secrets import redact

Report = Callable[[Compaction], Awaitable[None]]
"""Where a summary's start and end are told."""


async def unreported(compaction: Compaction) -> None:
    return None


def stream_report() -> Report:
    """Report to the run's `custom` stream (nowhere outside a run)."""
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except (RuntimeError, KeyError):
        return unreported

    async def report(compaction: Compaction) -> None:
        writer(compaction)

    return report


async def reported(report: Report, summarizing: Awaitable[str]) -> str:
    """The summary `summarizing` makes, told to `report` as it starts and as it ends
    (completed with the summary, failed with why, or cancelled)."""
    compaction_id = f"compaction-{uuid.uuid4().hex[:12]}"
    await report(Compaction(compaction_id, "in_progress"))
    try:
        summary = await summarizing
    except asyncio.CancelledError:
        await report(Compaction(compaction_id, "cancelled"))
        raise
    except Exception as exc:
        why = redact(str(exc) or type(exc).__name__)
        await report(Compaction(compaction_id, "failed", error=why))
        raise
    await report(Compaction(compaction_id, "completed", summary=summary))
    return summary
