"""Ephemeral sessions: kept in memory and gone when closed (the LSP face's inline edits).

An inline edit is one request whose outcome is a proposal the user reviews in the buffer;
there is no conversation to resume from an agent panel, so it is neither stored nor listed.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from deepacp.errors import DeepacpError
from deepacp.private import private_dir
from deepacp.session.modes import Mode
from deepacp.session.storage.records import SessionRecord, now


class EphemeralRecords:
    """`Records` for one session that leaves nothing behind: an in-memory checkpointer and a
    scratch folder under `$DEEPACP_HOME` deleted by `discard`."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._checkpointer: Any = None
        self._scratch: list[Path] = []

    def record(self, cwd: str, mode: Mode, model: str | None) -> SessionRecord:
        session_id, stamp = f"ephemeral-{uuid.uuid4().hex}", now()
        return SessionRecord(session_id, cwd, session_id, None, mode, model, stamp, stamp)

    def update(self, record: SessionRecord, **changes: Any) -> SessionRecord:
        return replace(record, **changes, updated_at=now())

    async def checkpointer(self) -> Any:
        if self._checkpointer is None:
            from langgraph.checkpoint.memory import InMemorySaver

            from deepacp.session.storage.checkpoints import with_history_cache

            self._checkpointer = with_history_cache(InMemorySaver)()
        return self._checkpointer

    def scratch_dir(self, thread_id: str) -> Path:
        private_dir(self.home / "scratch")
        path = private_dir(self.home / "scratch" / thread_id)
        self._scratch.append(path)
        return path

    async def fork(self, record: SessionRecord, title: str) -> SessionRecord:
        raise DeepacpError("this session is not kept (an inline edit), so it cannot be forked")

    def discard(self) -> None:
        for path in self._scratch:
            shutil.rmtree(path, ignore_errors=True)
        self._scratch.clear()
        self._checkpointer = None
