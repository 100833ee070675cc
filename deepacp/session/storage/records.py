"""Session records: what a session is kept as, what a session needs of where it is kept
(`Records`), and where the SQL stores keep them, with the logic they share (`Store`).

A store keeps a table of records (one row a session, in `COLUMNS` order), LangGraph's
checkpoints of each session's thread, and each thread's offloaded files in the scratch
folder under this machine's `$DEEPACP_HOME`.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from deepacp.config import EFFORTS
from deepacp.private import private_dir, private_home
from deepacp.session.modes import DEFAULT_MODE, MODE_IDS, Mode


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

FIRST_COLUMNS = """
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    title TEXT,
    mode TEXT NOT NULL,
    model TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL"""
"""The sessions table's columns as first made, in SQLite and in PostgreSQL's first
migration. Never changed: databases made from it exist; later columns are added to it."""


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


class Store(ABC):
    """Where a process's sessions are stored, listed and fenced, SQLite or PostgreSQL: the
    record logic over a SQL table is here; a subclass runs the statements on its database,
    copies a thread's checkpoints and fences sessions between processes."""

    table: ClassVar[str]
    """The table of session records."""
    mark: ClassVar[str]
    """The driver's placeholder for a statement's parameter."""

    def __init__(self, home: Path) -> None:
        self.home = private_home(home)  # conversations: the user's eyes only
        self._claims: set[str] = set()
        self._checkpointer: Any = None
        self._opening = asyncio.Lock()

    @abstractmethod
    def _run(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """Run one statement (its change committed); the rows it gives."""

    @abstractmethod
    async def _copy_thread(self, saver: Any, source: str, target: str) -> None:
        """Copy thread `source`'s checkpoints (all of them) to the new thread `target`."""

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The database's errors as the user is to see them (as they are, unless a store
        says otherwise)."""
        yield

    @abstractmethod
    async def checkpointer(self) -> Any: ...

    @abstractmethod
    def claim(self, session_id: str) -> None: ...

    @abstractmethod
    def release(self, session_id: str) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    @property
    def _select(self) -> str:
        return f"SELECT {', '.join(COLUMNS)} FROM {self.table}"

    def scratch_dir(self, thread_id: str) -> Path:
        """Where a thread's offloaded results and history files go: this machine's home,
        outside the workspace (never shared)."""
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
        session_id, stamp = uuid.uuid4().hex, now()
        record = SessionRecord(
            session_id, cwd, session_id, None, mode, model, stamp, stamp, effort, goal
        )
        self._run(
            f"INSERT INTO {self.table} ({', '.join(COLUMNS)}) "
            f"VALUES ({', '.join([self.mark] * len(COLUMNS))})",
            [getattr(record, c) for c in COLUMNS],
        )
        return record

    def get(self, session_id: str) -> SessionRecord | None:
        if "\x00" in session_id:  # no id holds NUL (and PostgreSQL text cannot)
            return None
        try:
            rows = self._run(f"{self._select} WHERE id = {self.mark}", (session_id,))
        except UnicodeEncodeError:  # a lone surrogate: no session can have this id
            return None
        return record_from_row(rows[0]) if rows else None

    def list(self, cwd: str | None = None) -> list[SessionRecord]:
        where, params = (f" WHERE cwd = {self.mark}", (cwd,)) if cwd is not None else ("", ())
        rows = self._run(f"{self._select}{where} ORDER BY updated_at DESC", params)
        return [record_from_row(row) for row in rows]

    def update(self, record: SessionRecord, **changes: Any) -> SessionRecord:
        record = replace(record, **changes, updated_at=now())
        columns = [c for c in COLUMNS if c != "id"]
        self._run(
            f"UPDATE {self.table} SET {', '.join(f'{c} = {self.mark}' for c in columns)} "
            f"WHERE id = {self.mark}",
            [getattr(record, c) for c in columns] + [record.id],
        )
        return record

    async def fork(self, record: SessionRecord, title: str) -> SessionRecord:
        """A new session holding a copy of `record`'s conversation as it is now (its
        checkpoints and this machine's offloaded files): the two diverge from here and
        are deleted apart."""
        saver = await self.checkpointer()  # its tables exist
        forked = self.create(record.cwd, record.mode, record.model, record.effort, record.goal)
        forked = self.update(forked, title=title)
        await self._copy_thread(saver, record.thread_id, forked.thread_id)
        scratch = self.home / "scratch" / record.thread_id
        if scratch.is_dir():
            shutil.copytree(scratch, self.scratch_dir(forked.thread_id), dirs_exist_ok=True)
        return forked

    async def delete(self, record: SessionRecord) -> None:
        self.claim(record.id)
        self._run(f"DELETE FROM {self.table} WHERE id = {self.mark}", (record.id,))
        saver = await self.checkpointer()
        with self._errors():
            await saver.adelete_thread(record.thread_id)
        shutil.rmtree(self.home / "scratch" / record.thread_id, ignore_errors=True)
        self.release(record.id)
