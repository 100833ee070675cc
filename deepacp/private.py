"""`$DEEPACP_HOME` is private to its user: folders 0700 and deepacp's own files 0600,
whoever created them (a home made beforehand with 0755, a log rotated into a new file,
a folder an older version made with the umask's mode)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path

from deepacp.errors import StoreError

DIR_MODE = 0o700
FILE_MODE = 0o600
DATABASES = ("sessions.db", "checkpoints.db")
JOURNALS = ("", "-wal", "-shm")
OWN_DIRS = (
    "logs",
    "locks",
    "scratch",
    "writes",
    "rewind",
    "rewind/sessions",
    "rewind/blobs",
    "cache",
    "cache/replays",
    "proposals",
    "server-scratch",
)
"""deepacp's own folders in the home, tightened as the home opens (older versions made
`rewind/`, `cache/` and the scratch folders with the umask's mode)."""


def private_dir(path: Path) -> Path:
    """Create `path` and every missing folder above it for our eyes only (`mkdir -p`
    would give those the umask's mode); tighten `path` if it exists."""
    missing = []
    folder = path
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
        _tighten(folder, DIR_MODE)  # the umask may have taken bits off
    _tighten(path, DIR_MODE)
    return path


def private_home(home: Path) -> Path:
    """The home, private, with deepacp's own folders in it tightened (a stat each)."""
    private_dir(home)
    for name in OWN_DIRS:
        if not (home / name).is_symlink():
            _tighten(home / name, DIR_MODE)
    return home


def private_file(path: Path) -> Path:
    """Create `path` if missing, readable and writable by us alone; tighten it if it exists
    (SQLite gives a database's -wal and -shm files the database's own mode)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE))
    except OSError:
        return path  # the caller's open reports it
    _tighten(path, FILE_MODE)
    return path


def write_private(target: Path, data: bytes) -> None:
    """Write `data` to `target` (0600) through a temporary file and a rename (named for the
    process and thread, so writers at once never rename each other's file away)."""
    tmp = private_file(target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"))
    tmp.write_bytes(data)
    tmp.replace(target)


def private_database(path: Path) -> Path:
    """The database file and its journals, made private before SQLite opens them."""
    for suffix in JOURNALS:
        journal = path.with_name(path.name + suffix)
        if not suffix or journal.exists():
            private_file(journal)
    return path


def _tighten(path: Path, wanted: int) -> None:
    try:
        info = path.stat()
        if stat.S_IMODE(info.st_mode) != wanted and info.st_uid == os.getuid():
            path.chmod(wanted)
    except OSError:
        pass


def unusable_database(path: Path, exc: BaseException) -> StoreError:
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return StoreError(
            f"{path} stayed locked by another process ({exc}); nothing is lost: try again, "
            "and if it goes on, look for a deepacp process that hangs"
        )
    return StoreError(
        f"{path} is not a usable SQLite database ({exc}); move it aside "
        f"(mv {path} {path}.broken) and start again — a new one is made, the sessions in the "
        "old one are lost unless sqlite3's .recover can save them; `deepacp doctor` checks it"
    )


def loose_modes(home: Path) -> list[str]:
    """deepacp's own paths under `home` that others can read, each with the fix."""
    paths = [home, *(home / name for name in OWN_DIRS)]
    paths += [home / f"{db}{suffix}" for db in DATABASES for suffix in JOURNALS]
    paths += sorted((home / "logs").glob("deepacp.log*"))
    problems = []
    for path in paths:
        try:
            current = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            continue
        wanted = DIR_MODE if path.is_dir() else FILE_MODE
        if current & 0o077:
            problems.append(f"{path} is {current:o}, readable by others: chmod {wanted:o} {path}")
    return problems


def database_problems(home: Path) -> list[str]:
    """The databases under `home` that SQLite cannot check as whole, each with the fix."""
    problems = []
    for name in DATABASES:
        path = home / name
        if not path.exists():
            continue
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
            try:
                verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error as exc:
            verdict = str(exc)
        if verdict != "ok":
            problems.append(str(unusable_database(path, verdict)))
    return problems
