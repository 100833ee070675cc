"""The blob store every session's restore points share: `$DEEPACP_HOME/rewind/blobs/`,
one file per distinct content, named by its SHA-256, within a byte budget.

A blob stays while a session refers to it (`points.json` or `held.json` of any session
under `rewind/sessions/`); `sweep` deletes the others once they are older than `GRACE_SECONDS`
(a blob just stored may not be referred to yet). The budget is checked against the
store's size as this process last counted it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from deepacp.config import DEFAULT_REWIND_BUDGET, load_config
from deepacp.errors import ConfigError
from deepacp.private import private_dir, write_private

GRACE_SECONDS = 600.0
HELD = "held.json"
"""In a session's folder: the blobs a process keeps for files not yet changed."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sessions_dir(home: Path) -> Path:
    return home / "rewind" / "sessions"


def referenced(folder: Path) -> set[str]:
    """The blobs one session's folder refers to: in its restore points, and held for files
    not yet changed (`HELD`); what cannot be read refers to nothing."""
    names: set[str] = set()
    with contextlib.suppress(OSError, ValueError, AttributeError, TypeError, KeyError):
        rows = json.loads((folder / "points.json").read_text(encoding="utf-8"))["points"]
        names |= {b for row in rows for b in row.get("before", {}).values() if b}
    with contextlib.suppress(OSError, ValueError, TypeError):
        names |= set(json.loads((folder / HELD).read_text(encoding="utf-8")))
    return names


class BlobStore:
    """Contents by SHA-256 under `folder`, at most `budget` bytes in all."""

    def __init__(self, folder: Path, budget: int, grace: float = GRACE_SECONDS) -> None:
        self.folder = folder
        self.budget = budget
        self.grace = grace
        self._used: int | None = None

    def _sizes(self) -> Iterable[tuple[os.DirEntry[str], int]]:
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if not entry.name.endswith(".tmp"):
                        yield entry, entry.stat().st_size

    @property
    def used(self) -> int:
        """Bytes stored, as last counted."""
        if self._used is None:
            self._used = sum(size for _, size in self._sizes())
        return self._used

    def has(self, name: str) -> bool:
        return (self.folder / name).is_file()

    def put(self, data: bytes) -> str | None:
        """Store `data` once; its name, or None when it would exceed the budget."""
        name = digest(data)
        target = self.folder / name
        if target.exists():
            with contextlib.suppress(OSError):
                os.utime(target)  # stored again: young, so a sweep leaves it
            return name
        if self.used + len(data) > self.budget:
            return None
        private_dir(self.folder)
        write_private(target, data)
        self._used = self.used + len(data)
        return name

    def get(self, name: str) -> bytes | None:
        try:
            return (self.folder / name).read_bytes()
        except FileNotFoundError:
            return None

    def sweep(self, sessions: Path) -> int:
        """Delete the blobs no session under `sessions` refers to; the bytes freed."""
        keep: set[str] = set()
        with contextlib.suppress(OSError):
            for folder in sessions.iterdir():
                keep |= referenced(folder)
        freed, now = 0, time.time()
        for entry, size in list(self._sizes()):
            with contextlib.suppress(OSError):
                if entry.name not in keep and now - entry.stat().st_mtime >= self.grace:
                    os.unlink(entry.path)
                    freed += size
        self._used = None
        return freed


def budget_of(home: Path) -> int:
    """The byte budget config.toml sets for restore points (the default if unreadable)."""
    try:
        return load_config(home).rewind_budget
    except ConfigError:
        return DEFAULT_REWIND_BUDGET


@functools.cache
def shared_blobs(home: Path) -> BlobStore:
    """The one blob store of `home` in this process."""
    return BlobStore(home / "rewind" / "blobs", budget_of(home))
