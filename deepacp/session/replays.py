"""Replays kept on disk: the events that redraw a session's conversation, saved with the
checkpoint they were read from.

A fresh process redraws a session from here without waiting for the harness (LangChain,
LangGraph: a second or more to import) and without re-reading the checkpoints; the events
are the ones a replay from the checkpoints gives, so the client sees the same updates.
A saved replay counts only for the same thread at the same checkpoint (and its pending
writes), the same workspace roots (they place the cards' locations) and the same code that
made it; anything else is read the long way and saved again. Sessions in SQLite only.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deepacp import events
from deepacp._version import __version__
from deepacp.events import Event
from deepacp.private import private_dir, write_private
from deepacp.session.storage.records import Records
from deepacp.session.storage.sqlite import SessionStore

log = logging.getLogger(__name__)

FORMAT = 1
_KINDS: dict[str, type] = {
    name: kind
    for name, kind in vars(events).items()
    if isinstance(kind, type)
    and dataclasses.is_dataclass(kind)
    and kind.__module__ == events.__name__
}
_PACKAGE = Path(__file__).resolve().parent.parent
_LIBRARIES = {
    "langchain_core": ("__init__.py",),
    "acp": ("__init__.py", "schema.py", "helpers.py", "utils.py"),
    "pydantic": ("version.py",),
}
"""Libraries whose code shapes what a replay, or a load made from one, holds (found, not
imported): LangChain's messages give the text and the reasoning, the ACP SDK and pydantic
write the updates."""


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"@": type(value).__name__, "fields": fields}
    if isinstance(value, tuple):
        return {"@": "tuple", "items": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"@": "dict", "items": {str(k): _encode(v) for k, v in value.items()}}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot keep a {type(value).__name__} in a replay")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value["@"]
    if tag == "tuple":
        return tuple(_decode(v) for v in value["items"])
    if tag == "dict":
        return {k: _decode(v) for k, v in value["items"].items()}
    return _KINDS[tag](**{k: _decode(v) for k, v in value["fields"].items()})


def file_stamp(path: Path) -> str:
    """What changes when `path` does: its path, modification time and size."""
    try:
        info = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{info.st_mtime_ns}:{info.st_size}"


def _library_files(name: str, files: tuple[str, ...]) -> list[str]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return [f"{name}:?"]
    if spec is None or spec.origin is None:
        return [f"{name}:?"]
    return [file_stamp(Path(spec.origin).parent / file) for file in files]


@functools.cache
def code_stamp() -> str:
    """Which code makes a replay, and a load from one: deepacp's version and files, and
    the libraries of `_LIBRARIES` (one stamp for the process: the code it runs is the
    code it imported)."""
    parts = [__version__, *(file_stamp(path) for path in sorted(_PACKAGE.rglob("*.py")))]
    for name, files in _LIBRARIES.items():
        parts += _library_files(name, files)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def replays_of(store: Records, server: object, remote: object) -> Replays | None:
    """Where the replays of sessions kept in `store` are saved and read back (None: they
    are not). Only sessions in the SQLite store whose thread runs in this process (no
    LangGraph `server`) on this machine's files (no `remote` checkout) have them: the
    others' checkpoints are not in the home's database."""
    if not isinstance(store, SessionStore) or server or remote:
        return None
    return Replays(store.home)


class Replays:
    """The saved replays of the sessions under `home` (one file per session)."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def _path(self, session_id: str) -> Path:
        return self.home / "cache" / "replays" / f"{session_id}.json"

    def load_path(self, session_id: str) -> Path:
        """Where the ACP face keeps what a load of the session sent (`acp/quickload.py`):
        beside the replay, and gone with it."""
        return self.home / "cache" / "replays" / f"{session_id}.load.json"

    def _checkpoint(self, thread_id: str) -> str | None:
        """The thread's latest checkpoint and how many pending writes it has (None: no
        checkpoint, or the database cannot be read)."""
        path = self.home / "checkpoints.db"
        if not path.exists():
            return None
        try:
            conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=10)
            try:
                row = conn.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND "
                    "checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread_id,),
                ).fetchone()
                if row is None:
                    return None
                (writes,) = conn.execute(
                    "SELECT COUNT(*) FROM writes WHERE thread_id = ? AND checkpoint_ns = '' "
                    "AND checkpoint_id = ?",
                    (thread_id, row[0]),
                ).fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            return None
        return f"{row[0]}+{writes}"

    def key(self, thread_id: str, roots: Sequence[str]) -> dict[str, Any] | None:
        """What a replay of the thread, read now, is saved under (None: nothing to read)."""
        checkpoint = self._checkpoint(thread_id)
        if checkpoint is None:
            return None
        return {
            "format": FORMAT,
            "thread": thread_id,
            "checkpoint": checkpoint,
            "roots": list(roots),
            "code": code_stamp(),
        }

    def _saved_key(self, session_id: str) -> tuple[Any, Any]:
        """The key a session's saved replay is under, and the open file (at its events)."""
        file = self._path(session_id).open("rb")
        try:
            return json.loads(file.readline()), file
        except ValueError:
            file.close()
            raise

    def is_saved(self, session_id: str, key: dict[str, Any] | None) -> bool:
        try:
            saved, file = self._saved_key(session_id)
        except (OSError, ValueError):
            return False
        file.close()
        return key is not None and saved == key

    def read(self, session_id: str, key: dict[str, Any] | None) -> list[Event] | None:
        """The replay saved under `key` (None: none is, read it the long way)."""
        if key is None:
            return None
        try:
            saved, file = self._saved_key(session_id)
        except (OSError, ValueError):
            return None
        with file:
            if saved != key:
                return None
            try:
                return list(_decode(json.loads(file.read())))
            except Exception:  # damaged, or written by other code: read it the long way
                log.debug("unusable saved replay of session %s", session_id, exc_info=True)
                return None

    def save(self, session_id: str, key: dict[str, Any] | None, replayed: list[Event]) -> None:
        """Keep `replayed`, read from the checkpoint `key` names."""
        if key is None:
            return
        try:
            encoded = _encode(replayed)
            if _decode(encoded) != replayed:  # only what reads back the same is kept
                return
            data = b"%s\n%s" % (
                json.dumps(key).encode(),
                json.dumps(encoded, ensure_ascii=False).encode(),
            )
        except (TypeError, ValueError, KeyError):
            log.debug("replay of session %s not kept", session_id, exc_info=True)
            return
        try:
            private_dir(self._path(session_id).parent)
            write_private(self._path(session_id), data)
        except OSError:
            log.debug("replay of session %s not kept", session_id, exc_info=True)

    def forget(self, session_id: str) -> None:
        """Remove a session's saved replay (its conversation is gone or changed)."""
        self._path(session_id).unlink(missing_ok=True)
        self.load_path(session_id).unlink(missing_ok=True)
