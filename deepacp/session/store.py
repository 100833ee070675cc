"""Where sessions live: a small SQLite table of session records next to LangGraph's
SQLite checkpoints, both under `$DEEPACP_HOME`. Survives editor and server restarts.
With a database URL configured, `open_store` gives the PostgreSQL store instead
(`postgres.py`), which several machines share.

Several server processes (editor windows) may share one home. A session is open in at most
one of them. Each process holds one advisory lock of its own (`locks/process-<token>.lock`,
which the kernel drops when the process ends, however it ends) and records the sessions it
has open in the `claims` table; a claim counts while its holder's lock is held. So a crash
leaves no stale claim, and a process holds one descriptor however many sessions it opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

from deepacp.config import EFFORTS, database_url
from deepacp.errors import ConfigError, SessionInUse
from deepacp.private import private_database, private_dir, private_home, unusable_database
from deepacp.session.modes import DEFAULT_MODE, MODE_IDS, Mode

log = logging.getLogger(__name__)

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
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL
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
    mode: Mode
    model: str | None
    created_at: str
    updated_at: str
    effort: str | None = None
    """The reasoning effort the user chose for this session (None: the default)."""
    goal: str | None = None
    """What done looks like (`/goal`): checked by a grader before each turn ends."""


COLUMNS = tuple(f.name for f in fields(SessionRecord))


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Columns added since a sessions.db was made (its rows get NULL: the default)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    for column in ("effort", "goal"):
        if column not in present:
            conn.execute(f"ALTER TABLE sessions ADD COLUMN {column} TEXT")


def record_from_row(row: Sequence[Any]) -> SessionRecord:
    """A stored row (in `COLUMNS` order) as a record; values we cannot use read as defaults."""
    record = SessionRecord(*row)
    if record.mode not in MODE_IDS:  # written by a newer version, say: start safe
        record = replace(record, mode=DEFAULT_MODE)
    if record.effort is not None and record.effort not in EFFORTS:
        record = replace(record, effort=None)
    if record.goal is not None and not isinstance(record.goal, str):
        record = replace(record, goal=None)
    return record


class Records(Protocol):
    """What a session needs of where it is kept: the store, or an ephemeral stand-in."""

    home: Path

    def update(self, record: SessionRecord, **changes: Any) -> SessionRecord: ...

    async def checkpointer(self) -> Any: ...

    def scratch_dir(self, thread_id: str) -> Path: ...

    async def fork(self, record: SessionRecord, title: str) -> SessionRecord: ...


class Store(Records, Protocol):
    """Where a process's sessions are stored, listed and fenced: SQLite or PostgreSQL."""

    def claim(self, session_id: str) -> None: ...

    def release(self, session_id: str) -> None: ...

    def create(
        self,
        cwd: str,
        mode: Mode,
        model: str | None,
        effort: str | None = None,
        goal: str | None = None,
    ) -> SessionRecord: ...

    def get(self, session_id: str) -> SessionRecord | None: ...

    def list(self, cwd: str | None = None) -> list[SessionRecord]: ...

    async def delete(self, record: SessionRecord) -> None: ...

    async def close(self) -> None: ...


def copy_scratch(store: Records, record: SessionRecord, forked: SessionRecord) -> None:
    """Copy `record`'s offloaded files (this machine's) to the session forked from it."""
    scratch = store.home / "scratch" / record.thread_id
    if scratch.is_dir():
        shutil.copytree(scratch, store.scratch_dir(forked.thread_id), dirs_exist_ok=True)


def open_store(home: Path) -> Store:
    """The store sessions live in: PostgreSQL when a database URL is configured, else
    SQLite under `home`. Nothing connects yet (a database that is down is an error when a
    session is made or listed); the Postgres driver is imported only when configured."""
    try:
        url = database_url(home)
    except ConfigError as exc:  # session/new reports it, where the model is read
        log.warning("sessions stay in SQLite under %s: %s", home, exc)
        return SessionStore(home)
    if url is None:
        return SessionStore(home)
    from deepacp.session.postgres import PostgresStore

    return PostgresStore(home, url)


class SessionStore:
    """Session records and the checkpointer for their threads."""

    def __init__(self, home: Path) -> None:
        self.home = private_home(home)  # conversations: the user's eyes only
        self._conn: sqlite3.Connection | None = None
        self._checkpointer: Any = None
        self._checkpoint_conn: Any = None
        self._opening = asyncio.Lock()
        self._token = uuid.uuid4().hex
        self._holder: IO[str] | None = None
        self._claims: set[str] = set()

    @property
    def _db(self) -> sqlite3.Connection:
        """sessions.db, opened on first use (a corrupt file is a `StoreError` each time)."""
        if self._conn is None:
            path = private_database(self.home / "sessions.db")
            try:
                conn = sqlite3.connect(path, timeout=10, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
                _add_missing_columns(conn)
                conn.execute(_CLAIMS)
                conn.commit()
            except sqlite3.DatabaseError as exc:
                raise unusable_database(path, exc) from None
            self._conn = conn
        return self._conn

    def _locks(self) -> Path:
        return private_dir(self.home / "locks")

    def _hold(self) -> None:
        """Take this process's own lock (once): what makes its claims count."""
        if self._holder is not None:
            return
        path = self._locks() / f"process-{self._token}.lock"
        handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 (held for the process's life)
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        handle.write(str(os.getpid()))
        handle.flush()
        self._holder = handle
        for other in self._locks().glob("process-*.lock"):  # sweep those of dead processes
            if other != path:
                self._holder_alive(other.stem.removeprefix("process-"))

    def _holder_alive(self, token: str) -> bool:
        """Whether the process that made a claim still runs (its lock is still held)."""
        path = self._locks() / f"process-{token}.lock"
        try:
            handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError:
            return False
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            path.unlink(missing_ok=True)  # its process is gone
            return False

    def claim(self, session_id: str) -> None:
        """Hold the session for this process, or raise `SessionInUse` if another holds it."""
        if session_id in self._claims or fcntl is None:
            return
        self._hold()
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")  # one claimant at a time, across processes
            row = db.execute(
                "SELECT holder, pid FROM claims WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is not None and row[0] != self._token and self._holder_alive(row[0]):
                raise SessionInUse(
                    f"session {session_id} is open in another deepacp process (pid {row[1]}); "
                    "close it there first"
                )
            db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?)",
                (session_id, self._token, os.getpid()),
            )
            db.commit()
        except BaseException:
            db.rollback()
            raise
        self._claims.add(session_id)

    def release(self, session_id: str) -> None:
        if session_id in self._claims:
            self._claims.discard(session_id)
            with contextlib.suppress(sqlite3.Error):
                self._db.execute(
                    "DELETE FROM claims WHERE session_id = ? AND holder = ?",
                    (session_id, self._token),
                )
                self._db.commit()

    async def checkpointer(self) -> Any:
        """The shared AsyncSqliteSaver (opened on first use, once, however many sessions ask)."""
        async with self._opening:
            if self._checkpointer is None:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                from deepacp.session.checkpoints import with_history_cache

                path = private_database(self.home / "checkpoints.db")
                conn = await aiosqlite.connect(path, timeout=10)
                try:
                    await conn.execute("PRAGMA busy_timeout=10000")
                    saver = with_history_cache(AsyncSqliteSaver)(conn)
                    await saver.setup()
                except sqlite3.DatabaseError as exc:
                    await conn.close()
                    raise unusable_database(path, exc) from None
                self._checkpoint_conn, self._checkpointer = conn, saver
        return self._checkpointer

    def scratch_dir(self, thread_id: str) -> Path:
        """Where a thread's offloaded results and history files go (outside the workspace)."""
        private_dir(self.home / "scratch")
        return private_dir(self.home / "scratch" / thread_id)

    def create(
        self,
        cwd: str,
        mode: Mode,
        model: str | None,
        effort: str | None = None,
        goal: str | None = None,
    ) -> SessionRecord:
        session_id = uuid.uuid4().hex
        stamp = now()
        record = SessionRecord(
            session_id, cwd, session_id, None, mode, model, stamp, stamp, effort, goal
        )
        placeholders = ", ".join("?" * len(COLUMNS))
        self._db.execute(
            f"INSERT INTO sessions ({', '.join(COLUMNS)}) VALUES ({placeholders})",
            [getattr(record, c) for c in COLUMNS],
        )
        self._db.commit()
        return record

    def get(self, session_id: str) -> SessionRecord | None:
        try:
            row = self._db.execute(
                f"SELECT {', '.join(COLUMNS)} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        except UnicodeEncodeError:  # a lone surrogate: no session can have this id
            return None
        return record_from_row(row) if row else None

    def list(self, cwd: str | None = None) -> list[SessionRecord]:
        query = f"SELECT {', '.join(COLUMNS)} FROM sessions"
        params: tuple = ()
        if cwd is not None:
            query += " WHERE cwd = ?"
            params = (cwd,)
        rows = self._db.execute(query + " ORDER BY updated_at DESC", params).fetchall()
        return [record_from_row(row) for row in rows]

    def update(self, record: SessionRecord, **changes: Any) -> SessionRecord:
        record = replace(record, **changes, updated_at=now())
        assignments = ", ".join(f"{c} = ?" for c in COLUMNS if c != "id")
        self._db.execute(
            f"UPDATE sessions SET {assignments} WHERE id = ?",
            [getattr(record, c) for c in COLUMNS if c != "id"] + [record.id],
        )
        self._db.commit()
        return record

    async def fork(self, record: SessionRecord, title: str) -> SessionRecord:
        """A new session holding a copy of `record`'s conversation as it is now (its
        checkpoints and offloaded files): the two diverge from here and are deleted apart."""
        forked = self.create(record.cwd, record.mode, record.model, record.effort, record.goal)
        forked = self.update(forked, title=title)
        saver = await self.checkpointer()
        async with saver.lock:
            for table in ("checkpoints", "writes"):
                async with saver.conn.execute(f"PRAGMA table_info({table})") as cursor:
                    rest = [row[1] for row in await cursor.fetchall() if row[1] != "thread_id"]
                names = ", ".join(rest)
                await saver.conn.execute(
                    f"INSERT INTO {table} (thread_id, {names}) "
                    f"SELECT ?, {names} FROM {table} WHERE thread_id = ?",
                    (forked.thread_id, record.thread_id),
                )
            await saver.conn.commit()
        copy_scratch(self, record, forked)
        return forked

    async def delete(self, record: SessionRecord) -> None:
        self.claim(record.id)
        self._db.execute("DELETE FROM sessions WHERE id = ?", (record.id,))
        self._db.commit()
        saver = await self.checkpointer()
        await saver.adelete_thread(record.thread_id)
        shutil.rmtree(self.home / "scratch" / record.thread_id, ignore_errors=True)
        self.release(record.id)

    async def close(self) -> None:
        for session_id in list(self._claims):
            self.release(session_id)
        if self._holder is not None:
            (self._locks() / f"process-{self._token}.lock").unlink(missing_ok=True)
            self._holder.close()
            self._holder = None
        if self._checkpoint_conn is not None:
            await self._checkpoint_conn.close()
            self._checkpoint_conn = self._checkpointer = None
        if self._conn is not None:
            self._conn.close()
