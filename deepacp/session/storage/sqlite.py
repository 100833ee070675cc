"""Sessions in SQLite: a small table of session records next to LangGraph's SQLite
checkpoints, both under `$DEEPACP_HOME`. Survives editor and server restarts.

Several server processes (editor windows) may share one home. A session is open in at most
one of them. Each process holds one advisory lock of its own (`locks/process-<token>.lock`,
which the kernel drops when the process ends, however it ends) and records the sessions it
has open in the `claims` table; a claim counts while its holder's lock is held. So a crash
leaves no stale claim, and a process holds one descriptor however many sessions it opens.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from deepacp.errors import SessionInUse
from deepacp.private import private_database, private_dir, unusable_database
from deepacp.session.storage.records import COLUMNS, FIRST_COLUMNS, Store

try:
    import fcntl
except ImportError:  # Windows: no fencing between processes
    fcntl = None  # type: ignore[assignment]

BUSY_WAIT = 10.0
"""Seconds to wait for another process's write to sessions.db before giving up."""

_SCHEMA = f"CREATE TABLE IF NOT EXISTS sessions ({FIRST_COLUMNS})"
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL
)
"""


def _wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode. Another process switching it at the same moment makes
    SQLite answer "locked" at once, without its busy wait: try again for `BUSY_WAIT`."""
    deadline = time.monotonic() + BUSY_WAIT
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Columns added since a sessions.db was made (its rows get NULL: the default)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    for column in COLUMNS:
        if column not in present:
            conn.execute(f"ALTER TABLE sessions ADD COLUMN {column} TEXT")


class SessionStore(Store):
    """`Store` in SQLite files under `home`: the records, and the checkpointer for their
    threads."""

    table = "sessions"
    mark = "?"

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self._conn: sqlite3.Connection | None = None
        self._checkpoint_conn: Any = None
        self._token = uuid.uuid4().hex
        self._holder: IO[str] | None = None

    @property
    def _db(self) -> sqlite3.Connection:
        """sessions.db, opened on first use (a corrupt file is a `StoreError` each time)."""
        if self._conn is None:
            path = private_database(self.home / "sessions.db")
            try:
                conn = sqlite3.connect(path, timeout=BUSY_WAIT, check_same_thread=False)
                _wal(conn)
                # One process at a time reads and changes the schema: two that start together
                # on an old file would both see a column missing and both add it.
                conn.execute("BEGIN IMMEDIATE")
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

                from deepacp.session.storage.checkpoints import with_history_cache

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

    def _run(self, sql: str, params: Sequence[Any]) -> list[Any]:
        db = self._db
        rows = db.execute(sql, params).fetchall()
        db.commit()
        return rows

    async def _copy_thread(self, saver: Any, source: str, target: str) -> None:
        async with saver.lock:
            for table in ("checkpoints", "writes"):
                async with saver.conn.execute(f"PRAGMA table_info({table})") as cursor:
                    rest = [row[1] for row in await cursor.fetchall() if row[1] != "thread_id"]
                names = ", ".join(rest)
                await saver.conn.execute(
                    f"INSERT INTO {table} (thread_id, {names}) "
                    f"SELECT ?, {names} FROM {table} WHERE thread_id = ?",
                    (target, source),
                )
            await saver.conn.commit()

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
