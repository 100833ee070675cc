"""Sessions in PostgreSQL: records, LangGraph's checkpoints (langgraph-checkpoint-postgres)
and fencing in one database that several machines share, each with its own `$DEEPACP_HOME`
(for its logs, scratch files and config).

A session is open in at most one process: opening it takes a session-level advisory lock
keyed by its id on this process's connection, which PostgreSQL drops when the connection
ends, however the process ends. The schema is migrated on the first connection
(`migrations.py`). A database that cannot be reached is a `StoreError` at each use, never
at start-up, so the server stays up and says what is wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from deepacp.config import DATABASE_SCHEMES
from deepacp.errors import SessionInUse, StoreError
from deepacp.secrets import redact, register_secrets
from deepacp.session.storage import migrations
from deepacp.session.storage.records import Store

try:
    import psycopg
except ImportError:  # the `postgres` extra is not installed: said when a session needs it
    psycopg = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5
"""Seconds to wait for the database before saying it cannot be reached."""
SESSION_LOCK = "deepacp.session:"
"""The advisory lock of session S is keyed by the hash of this prefix + S."""
SAVER_SETUP_LOCK = "deepacp.checkpoint-setup"
"""Held while LangGraph's saver sets up its tables. Not `MIGRATION_LOCK`, and taken by
polling, not waiting: its CREATE INDEX CONCURRENTLY waits for every running statement,
so a statement waiting for the lock would wait for it in turn (a deadlock)."""
_TRY_LOCK = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS taken"
_UNLOCK = "SELECT pg_advisory_unlock(hashtextextended(%s, 0))"
_SETUP = (SAVER_SETUP_LOCK,)
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
"""langgraph-checkpoint-postgres's tables, each keyed by `thread_id`."""
_OTHER_COLUMNS = (
    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
    "AND table_name = %s AND column_name <> 'thread_id' ORDER BY ordinal_position"
)


def shown_url(url: str) -> str:
    """`url` as it may be shown and logged: scheme, user, host, port and database only."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the configured database"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{parts.netloc.rpartition('@')[2]}{parts.path}"


def _register_password(url: str) -> None:
    """The URL's password (in the authority or `?password=`) is a secret from then on."""
    with contextlib.suppress(ValueError):
        passwords = parse_qs(urlsplit(url).query).get("password", [])
        register_secrets({"DATABASE_URL": url, "PASSWORD": " ".join(passwords)}, {})


async def _open_saver(url: str) -> tuple[Any, Any]:
    """A connection pool and the LangGraph saver on it, its tables set up under a lock (its
    own migrations are not safe to run twice at once)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    from deepacp.session.storage.checkpoints import with_history_cache

    pool: Any = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=4,
        open=False,
        check=AsyncConnectionPool.check_connection,  # a restarted server: connect again
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": CONNECT_TIMEOUT,
            "application_name": "deepacp",
        },
    )
    try:
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        saver = with_history_cache(AsyncPostgresSaver)(pool)
        async with pool.connection() as conn:
            while not (await (await conn.execute(_TRY_LOCK, _SETUP)).fetchone())["taken"]:
                await asyncio.sleep(0.05)
            try:
                await saver.setup()
            finally:
                await conn.execute(_UNLOCK, _SETUP)
    except BaseException:
        await pool.close()
        raise
    return pool, saver


class PostgresStore(Store):
    """`Store` in a PostgreSQL database: one connection for records and session locks, a
    small pool for the checkpointer."""

    table = "deepacp_sessions"
    mark = "%s"

    def __init__(self, home: Path, url: str) -> None:
        super().__init__(home)
        self.url = url
        self.where = shown_url(url)
        _register_password(url)
        self._conn: Any = None
        self._pool: Any = None

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Database errors as one line the user can act on; a lost connection is dropped,
        to be made again on the next use."""
        try:
            yield
        except psycopg.Error as exc:
            if self._conn is not None and self._conn.closed:
                self._conn = None
            raise self._unusable(exc) from None

    def _unusable(self, exc: BaseException) -> StoreError:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return StoreError(
            f"the session database {self.where} cannot be used: {redact(reason)} "
            "(`deepacp doctor` checks it)"
        )

    def _usable_url(self) -> None:
        if psycopg is None:
            raise StoreError(
                f"sessions are configured to live in {self.where}, but the PostgreSQL driver "
                "is not installed: pip install 'deepacp[postgres]'"
            )
        if not self.url.startswith(DATABASE_SCHEMES):
            raise StoreError(
                f"the database URL must start with postgresql://, not {self.where!r} "
                '(as in "postgresql://user@host:5432/deepacp")'
            )

    def connect(self) -> Any:
        """A new autocommit connection to the database (`StoreError` if it cannot be had)."""
        self._usable_url()
        with self._errors():
            return psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT,
                application_name="deepacp",
            )

    @property
    def _db(self) -> Any:
        """The records connection, made (and the schema migrated) on first use; after a
        lost connection, the sessions this process had open are locked again."""
        if self._conn is None:
            conn = self.connect()
            try:
                with self._errors():
                    migrations.migrate(conn)
                    for session_id in list(self._claims):
                        if not self._lock(conn, session_id):
                            log.warning("session %s was taken by another process", session_id)
                            self._claims.discard(session_id)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    @staticmethod
    def _lock(conn: Any, session_id: str) -> bool:
        return bool(conn.execute(_TRY_LOCK, (SESSION_LOCK + session_id,)).fetchone()[0])

    def claim(self, session_id: str) -> None:
        """Hold the session for this process, or raise `SessionInUse` if another holds it."""
        if session_id in self._claims:
            return
        db = self._db
        with self._errors():
            taken = self._lock(db, session_id)
        if not taken:
            raise SessionInUse(
                f"session {session_id} is open in another deepacp process (on this machine "
                "or another one sharing the database); close it there first"
            )
        self._claims.add(session_id)

    def release(self, session_id: str) -> None:
        if session_id not in self._claims:
            return
        self._claims.discard(session_id)
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.execute(_UNLOCK, (SESSION_LOCK + session_id,))

    async def checkpointer(self) -> Any:
        """The shared AsyncPostgresSaver (opened on first use, once, however many ask)."""
        async with self._opening:
            if self._checkpointer is None:
                self._db  # noqa: B018 (reachable, migrated: a clear error now, not a pool timeout)
                try:
                    self._pool, self._checkpointer = await _open_saver(self.url)
                except psycopg.Error as exc:
                    raise self._unusable(exc) from None
        return self._checkpointer

    def _run(self, sql: str, params: Sequence[Any]) -> list[Any]:
        db = self._db
        with self._errors():
            cursor = db.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    async def _copy_thread(self, saver: Any, source: str, target: str) -> None:
        """In one transaction, with whatever columns the saver's tables have now."""
        db = self._db
        with self._errors(), db.transaction():
            for table in CHECKPOINT_TABLES:
                rows = db.execute(_OTHER_COLUMNS, (table,)).fetchall()
                names = ", ".join(f'"{name}"' for (name,) in rows)
                db.execute(
                    f"INSERT INTO {table} (thread_id, {names}) "
                    f"SELECT %s, {names} FROM {table} WHERE thread_id = %s",
                    (target, source),
                )

    async def close(self) -> None:
        for session_id in list(self._claims):
            self.release(session_id)
        if self._pool is not None:
            await self._pool.close()
            self._pool = self._checkpointer = None
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None
