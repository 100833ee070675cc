"""Replacing a workspace file whole, atomically and without following a link: the new
content is written in a private folder made beside the file (a fresh name no link can be
planted at), then renamed over the file, whose mode it keeps. The folders on the way
are opened without following links (`nofollow.open_folder`), so a folder swapped for a
link since the path was resolved is refused; a link where the file was is replaced,
never written through.

While a temporary folder exists a journal in `$DEEPACP_HOME` names it, so one a process
killed between the write and the rename leaves behind is removed by the next."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from deepacp.backends.errors import BackendError
from deepacp.backends.nofollow import FOLDER_FLAGS, open_folder, refused, split
from deepacp.private import private_dir

_UMASK = os.umask(0)
os.umask(_UMASK)

_journal: Path | None = None

_WRITE_FOLDER = re.compile(r"\.[^/]{1,64}\.[0-9a-f]{8}\.tmp")
"""The name of the private folder a file is written in before it is renamed over itself."""


def in_write_folder(path: str) -> bool:
    """Whether workspace path `path` lies in such a folder: a write still on its way (a
    scan that sees one must not take it for a file of the workspace)."""
    return any(_WRITE_FOLDER.fullmatch(part) for part in path.split("/")[:-1])


def keep_write_journal(directory: Path) -> None:
    """Journal every temporary folder in `directory` while it exists, and first delete
    those a killed process left behind. Each session calls it on opening."""
    global _journal
    private_dir(directory)
    for entry in directory.iterdir():
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and _alive(int(pid)):
            continue
        with contextlib.suppress(OSError, ValueError):
            left = Path(entry.read_text(encoding="utf-8"))
            if left.name.startswith(".") and left.name.endswith(".tmp"):  # ours, nothing else
                _remove_left(left)
        entry.unlink(missing_ok=True)
    _journal = directory


def _remove_left(left: Path) -> None:
    """Remove a temporary file, or a temporary folder and the files in it; a link is
    removed itself, never followed."""
    if not stat.S_ISDIR(os.lstat(left).st_mode):
        left.unlink()
        return
    fd = os.open(left, FOLDER_FLAGS)
    try:
        for name in os.listdir(fd):
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)
    left.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


@contextlib.contextmanager
def _journaled(folder: Path) -> Iterator[None]:
    """Note `folder` in the journal (before it exists: no kill can leave it unnoted)."""
    entry = None
    if _journal is not None:
        entry = _journal / f"{os.getpid()}-{secrets.token_hex(8)}"
        try:
            entry.write_text(str(folder), encoding="utf-8")
        except OSError:  # best effort: a journal gone missing must not stop the write
            entry = None
    try:
        yield
    finally:
        if entry is not None:
            entry.unlink(missing_ok=True)


def replace_file(root: Path, relative: str, data: bytes) -> None:
    """Make workspace file `relative` (resolved, under the resolved `root`) hold `data`,
    creating it and its folders if missing; a `BackendError` says why it could not."""
    folder, name = split(relative)
    if not name:
        raise BackendError("cannot write to the workspace root itself; give a file path")
    with open_folder(root, folder, create=True) as parent:
        try:
            _replace(parent, root / relative, name, data)
        except OSError as exc:
            raise refused(relative, exc) from None


def _replace(parent: int, target: Path, name: str, data: bytes) -> None:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    else:
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "it is a directory")
        mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else 0o666 & ~_UMASK
    private = f".{name[:64]}.{secrets.token_hex(4)}.tmp"
    with _journaled(target.parent / private):
        os.mkdir(private, 0o700, dir_fd=parent)
        try:
            inside = os.open(private, FOLDER_FLAGS, dir_fd=parent)
            try:
                _write_new(inside, name, data, mode)
                os.rename(name, name, src_dir_fd=inside, dst_dir_fd=parent)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=inside)
                os.close(inside)
        finally:
            os.rmdir(private, dir_fd=parent)


def _write_new(folder: int, name: str, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
