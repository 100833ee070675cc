"""Where sessions live: a small SQLite table of session records next to LangGraph's
SQLite checkpoints, both under `$DEEPACP_HOME`. Survives editor and server restarts.

Several server processes (editor windows) may share one home. A session is open in at most
one of them: opening it takes an advisory lock on `locks/<id>.lock`, which the kernel
drops when the process ends, however it ends, so a crash leaves no stale lock.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import uuid
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from deepacp.errors import SessionInUse

try:
    import fcntl
except ImportError:  # Windows: no fencing between processes
    fcntl = None  # type: ignore[assignment]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    title TEXT,
    mode TEXT NOT NULL,
    model TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
)
"""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class SessionRecord:
    id: str
    cwd: str
    thread_id: str
    title: str | None
    mode: str
    model: str | None
    created_at: str
    updated_at: str


_COLUMNS = tuple(f.name for f in fields(SessionRecord))


class SessionStore:
    """Session records and the checkpointer for their threads."""

    def __init__(self, home: Path) -> None:
        self.home = home
        home.mkdir(mode=0o700, parents=True, exist_ok=True)  # conversations: the user's eyes only
        self._db = sqlite3.connect(home / "sessions.db", timeout=10, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._checkpointer: Any = None
        self._checkpoint_conn: Any = None
        self._opening = asyncio.Lock()
        self._claims: dict[str, IO[str]] = {}

    def claim(self, session_id: str) -> None:
        """Hold the session for this process, or raise `SessionInUse` if another holds it."""
        if session_id in self._claims or fcntl is None:
            return
        path = self.home / "locks" / f"{session_id}.lock"
        path.parent.mkdir(exist_ok=True)
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held while open)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip()
            handle.close()
            where = f" (pid {owner})" if owner else ""
            raise SessionInUse(
                f"session {session_id} is open in another deepacp process{where}; "
                "close it there first"
            ) from None
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        self._claims[session_id] = handle

    def release(self, session_id: str) -> None:
        handle = self._claims.pop(session_id, None)
        if handle is not None:
            handle.close()

    async def checkpointer(self) -> Any:
        """The shared AsyncSqliteSaver (opened on first use, once, however many sessions ask)."""
        async with self._opening:
            if self._checkpointer is None:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                conn = await aiosqlite.connect(self.home / "checkpoints.db", timeout=10)
                await conn.execute("PRAGMA busy_timeout=10000")
                saver = AsyncSqliteSaver(conn)
                await saver.setup()
                self._checkpoint_conn, self._checkpointer = conn, saver
        return self._checkpointer

    def scratch_dir(self, thread_id: str) -> Path:
        """Where a thread's offloaded results and history files go (outside the workspace)."""
        path = self.home / "scratch" / thread_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def create(self, cwd: str, mode: str, model: str | None) -> SessionRecord:
        session_id = uuid.uuid4().hex
        stamp = now()
        record = SessionRecord(session_id, cwd, session_id, None, mode, model, stamp, stamp)
        placeholders = ", ".join("?" * len(_COLUMNS))
        self._db.execute(
            f"INSERT INTO sessions ({', '.join(_COLUMNS)}) VALUES ({placeholders})",
            [getattr(record, c) for c in _COLUMNS],
        )
        self._db.commit()
        return record

    def get(self, session_id: str) -> SessionRecord | None:
        try:
            row = self._db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        except UnicodeEncodeError:  # a lone surrogate: no session can have this id
            return None
        return SessionRecord(*row) if row else None

    def list(self, cwd: str | None = None) -> list[SessionRecord]:
        query = f"SELECT {', '.join(_COLUMNS)} FROM sessions"
        params: tuple = ()
        if cwd is not None:
            query += " WHERE cwd = ?"
            params = (cwd,)
        rows = self._db.execute(query + " ORDER BY updated_at DESC", params).fetchall()
        return [SessionRecord(*row) for row in rows]

    def update(self, record: SessionRecord, **changes: Any) -> SessionRecord:
        record = replace(record, **changes, updated_at=now())
        assignments = ", ".join(f"{c} = ?" for c in _COLUMNS if c != "id")
        self._db.execute(
            f"UPDATE sessions SET {assignments} WHERE id = ?",
            [getattr(record, c) for c in _COLUMNS if c != "id"] + [record.id],
        )
        self._db.commit()
        return record

    async def delete(self, record: SessionRecord) -> None:
        self.claim(record.id)
        self._db.execute("DELETE FROM sessions WHERE id = ?", (record.id,))
        self._db.commit()
        saver = await self.checkpointer()
        await saver.adelete_thread(record.thread_id)
        shutil.rmtree(self.home / "scratch" / record.thread_id, ignore_errors=True)
        (self.home / "locks" / f"{record.id}.lock").unlink(missing_ok=True)
        self.release(record.id)

    async def close(self) -> None:
        for session_id in list(self._claims):
            self.release(session_id)
        if self._checkpoint_conn is not None:
            await self._checkpoint_conn.close()
            self._checkpoint_conn = self._checkpointer = None
        self._db.close()
