"""StateBackend: files kept in the agent's graph state (the `files` channel).

A tool run opens a `state_scope` over the state it was given; the backend reads through
it and records writes and deletions, which the tool layer returns as a state update.
Deletions are explicit tombstones (`None`), so they survive merges (sub-agents included).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TypedDict

from deepacp.backends.errors import BackendError
from deepacp.backends.keyvalue import KeyValueBackend


class FileRecord(TypedDict):
    content: str
    modified_at: str


FilesUpdate = dict[str, FileRecord | None]


def merge_files(current: Mapping[str, FileRecord] | None, update: FilesUpdate | None) -> dict:
    """Reducer for the `files` channel: later writes win, `None` deletes."""
    merged = dict(current or {})
    for path, record in (update or {}).items():
        if record is None:
            merged.pop(path, None)
        else:
            merged[path] = record
    return merged


class StateScope:
    """A view of the state's files for one tool run, plus the changes it made."""

    def __init__(self, files: Mapping[str, FileRecord] | None) -> None:
        self.base = files or {}
        self.updates: FilesUpdate = {}

    def get(self, path: str) -> FileRecord | None:
        if path in self.updates:
            return self.updates[path]
        return self.base.get(path)

    def paths(self) -> list[str]:
        return [p for p in {*self.base, *self.updates} if self.get(p) is not None]


_scope: ContextVar[StateScope | None] = ContextVar("deepacp_state_scope", default=None)


@contextlib.contextmanager
def state_scope(files: Mapping[str, FileRecord] | None) -> Iterator[StateScope]:
    """Make `files` (a graph state's `files` value) visible to StateBackend calls."""
    scope = StateScope(files)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def _current() -> StateScope:
    scope = _scope.get()
    if scope is None:
        raise BackendError("StateBackend is only usable inside an agent run (no state in scope)")
    return scope


class StateBackend(KeyValueBackend):
    """Files in graph state: private to a thread, checkpointed with it, no shell.

    `key_prefix` keeps a routed backend's files apart in the shared `files` channel: with
    the prefix `/large_tool_results/` a file `x` is stored under `/large_tool_results/x`,
    while an unprefixed backend keeps workspace paths (which never start with `/`).
    """

    def __init__(self, key_prefix: str = "") -> None:
        self.key_prefix = key_prefix

    async def _load(self, path: str) -> str | None:
        record = _current().get(self.key_prefix + path)
        return None if record is None else record["content"]

    async def _list(self) -> list[str]:
        prefix = self.key_prefix
        if prefix:
            return [p[len(prefix) :] for p in _current().paths() if p.startswith(prefix)]
        return [p for p in _current().paths() if not p.startswith("/")]

    async def _save(self, path: str, content: str) -> None:
        stamp = datetime.now(UTC).isoformat()
        _current().updates[self.key_prefix + path] = FileRecord(content=content, modified_at=stamp)

    async def _remove(self, path: str) -> None:
        _current().updates[self.key_prefix + path] = None
