"""Seeing and removing a path inside a workspace root after a hostile command: no link on
the way is followed (a folder swapped for a link to the home cannot redirect a removal), and
a folder the command made unreadable or unwritable (`chmod 555`) gets its owner's rights
back before anything in it is removed. Failures raise OSError, to be said."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from deepacp.backends.nofollow import FOLDER_FLAGS, descend

MAX_DEPTH = 256
"""Folders deeper than this under a path being removed are not followed: it fails."""
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)
"""A path missing, or with a file or a link where a folder should be: not in the workspace."""

Kind = Literal["absent", "file", "link", "folder", "other", "unreadable"]


@dataclass(frozen=True)
class PathState:
    """What is at a path: its kind, a digest of its content (a file's bytes, a link's
    target) and its mode."""

    kind: Kind
    digest: str = ""
    mode: int = 0


ABSENT = PathState("absent")


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).parts
    if not parts:
        raise OSError(errno.EINVAL, "the workspace root itself")
    return parts


def _grant(parent: int, name: str) -> None:
    """Give the owner read, write and search rights on the folder `name` (never a link)."""
    info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), name)
    os.chmod(name, stat.S_IMODE(info.st_mode) | stat.S_IRWXU, dir_fd=parent, follow_symlinks=False)


def _open_root(root: Path, repair: bool) -> int:
    try:
        return os.open(root, FOLDER_FLAGS)
    except PermissionError:
        if not repair:
            raise
        os.chmod(root, stat.S_IMODE(os.stat(root).st_mode) | stat.S_IRWXU)
        return os.open(root, FOLDER_FLAGS)


def _open_child(parent: int, name: str, repair: bool) -> int:
    """The folder `name` in `parent`, never a link; with `repair`, the rights to open it
    are given back first if a command took them (on `parent`, then on the folder)."""
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=parent)
    except PermissionError:
        if not repair:
            raise
    _writable(parent)
    with contextlib.suppress(PermissionError):
        return os.open(name, FOLDER_FLAGS, dir_fd=parent)
    _grant(parent, name)
    return os.open(name, FOLDER_FLAGS, dir_fd=parent)


def _open_folder(root: Path, parts: tuple[str, ...], repair: bool) -> int:
    """A descriptor of the folder `root/parts`, reached without following links."""
    return descend(_open_root(root, repair), parts, functools.partial(_open_child, repair=repair))


def capture(root: Path, path: Path) -> PathState:
    """What is at `path` (inside `root`) now."""
    parts = _parts(root, path)
    try:
        parent = _open_folder(root, parts[:-1], repair=False)
    except PermissionError:
        return PathState("unreadable")
    except OSError as exc:
        if exc.errno in _NOT_THERE:
            return ABSENT
        raise
    try:
        return _state(parent, parts[-1])
    finally:
        os.close(parent)


def _state(parent: int, name: str) -> PathState:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return ABSENT
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        target = os.fsencode(os.readlink(name, dir_fd=parent))
        return PathState("link", hashlib.sha256(target).hexdigest())
    if stat.S_ISDIR(info.st_mode):
        return PathState("folder", mode=mode)
    if not stat.S_ISREG(info.st_mode):
        return PathState("other", mode=mode)
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=parent)
    except PermissionError:
        return PathState("unreadable", mode=mode)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as file:
        while chunk := file.read(1 << 16):
            digest.update(chunk)
    return PathState("file", digest.hexdigest(), mode)


def listing(root: Path, folder: Path, limit: int = 256) -> tuple[tuple[str, PathState], ...]:
    """The entries of `folder` (inside `root`) and their states, the first `limit` by name."""
    try:
        fd = _open_folder(root, _parts(root, folder), repair=False)
    except PermissionError:
        return (("", PathState("unreadable")),)
    except OSError as exc:
        if exc.errno in _NOT_THERE:
            return ()
        raise
    try:
        return tuple((name, _state(fd, name)) for name in sorted(os.listdir(fd))[:limit])
    finally:
        os.close(fd)


def remove(root: Path, path: Path) -> bool:
    """Remove `path` (inside `root`) and all it holds; whether there was anything."""
    parts = _parts(root, path)
    try:
        parent = _open_folder(root, parts[:-1], repair=True)
    except OSError as exc:
        if exc.errno in _NOT_THERE:
            return False
        raise
    try:
        return _remove_entry(parent, parts[-1], 0)
    finally:
        os.close(parent)


def _writable(fd: int) -> None:
    """Give the owner read, write and search rights on the folder `fd`."""
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & stat.S_IRWXU != stat.S_IRWXU:
        os.fchmod(fd, mode | stat.S_IRWXU)


def _in(parent: int, change: Callable[[], object]) -> None:
    """Make `change` in the folder `parent`, giving back its rights first if it needs them."""
    try:
        change()
    except PermissionError:
        _writable(parent)
        change()


def _remove_entry(parent: int, name: str, depth: int) -> bool:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        _in(parent, lambda: os.unlink(name, dir_fd=parent))
        return True
    if depth >= MAX_DEPTH:
        raise OSError(errno.ELOOP, f"more than {MAX_DEPTH} folders deep")
    fd = _open_child(parent, name, repair=True)
    try:
        for child in os.listdir(fd):
            _remove_entry(fd, child, depth + 1)
    finally:
        os.close(fd)
    _in(parent, lambda: os.rmdir(name, dir_fd=parent))
    return True
