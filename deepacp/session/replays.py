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
from deepacp.private import private_dir
from deepacp.session.blobs import write_private

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
_MAKERS = (
    "events.py",
    "session/turns/projection.py",
    "session/turns/cards.py",
    "session/replays.py",
    "harness/messages.py",
    "harness/contracts.py",
    "harness/usage.py",
    "harness/middleware/goal.py",
    "harness/middleware/inbox.py",
    "harness/middleware/truncation.py",
)
"""The files whose code turns messages into replayed events."""


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


def _code_stamp() -> str:
    """Which code made a replay: the version and the files that make one (and LangChain's
    messages, whose content blocks give the text and the reasoning)."""
    parts = [__version__]
    for name in _MAKERS:
        try:
            info = (_PACKAGE / name).stat()
            parts.append(f"{name}:{info.st_mtime_ns}:{info.st_size}")
        except OSError:
            parts.append(f"{name}:missing")
    try:  # found, not imported
        spec = importlib.util.find_spec("langchain_core")
        origin = Path(spec.origin if spec and spec.origin else "").stat()
        parts.append(f"langchain_core:{origin.st_mtime_ns}:{spec and spec.origin}")
    except (ImportError, ValueError, OSError):
        parts.append("langchain_core:?")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class Replays:
    """The saved replays of the sessions under `home` (one file per session)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._stamp: str | None = None

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
        if self._stamp is None:
            self._stamp = _code_stamp()
        return {
            "format": FORMAT,
            "thread": thread_id,
            "checkpoint": checkpoint,
            "roots": list(roots),
            "code": self._stamp,
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
