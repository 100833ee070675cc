"""Where sessions live: a small SQLite table of session records next to LangGraph's
SQLite checkpoints, both under `$DEEPACP_HOME`. Survives editor and server restarts."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import uuid
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
        home.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(home / "sessions.db", timeout=10, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._checkpointer: Any = None
        self._checkpoint_conn: Any = None
        self._opening = asyncio.Lock()

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
        row = self._db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
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
        self._db.execute("DELETE FROM sessions WHERE id = ?", (record.id,))
        self._db.commit()
        saver = await self.checkpointer()
        await saver.adelete_thread(record.thread_id)
        shutil.rmtree(self.home / "scratch" / record.thread_id, ignore_errors=True)

    async def close(self) -> None:
        if self._checkpoint_conn is not None:
            await self._checkpoint_conn.close()
            self._checkpoint_conn = self._checkpointer = None
        self._db.close()
