"""The programs deepacp runs itself, outside the sandbox (git, rg, bwrap, unshare, ssh,
docker): found on PATH, but never one a sandboxed command could have put there.

A sandboxed command writes only the workspace roots (and its private /tmp), with our
rights, so a program inside a workspace root that we could change is skipped, whether it is
named there or its PATH folder or its link leads there (one of root's that an ordinary user
cannot change stays usable: a workspace of `/` keeps /usr/bin). The roots are the caller's
and every root a sandbox was made for in this process (`note_workspace`): a command of one
session could plant a program for another. A program that someone but root and this user
could change is skipped too: the file and every folder above it must belong to root or to
us and be writable by no group or other user (but for a sticky folder such as /tmp). The
first program on PATH that passes is returned by its real path, so that what runs is what
was checked.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

_workspaces: dict[Path, None] = {}
"""Every workspace root a sandbox was made for in this process (links resolved)."""


def note_workspace(roots: Iterable[Path]) -> None:
    """Note `roots` as written by sandboxed commands: no program is taken from them."""
    for root in roots:
        _workspaces[Path(os.path.realpath(root))] = None


def trusted_program(
    name: str, roots: Sequence[Path] = (), *, search: str | None = None
) -> str | None:
    """The real path of the first program `name` on PATH (or the folders of `search`, as
    PATH names them) that lies outside the workspace `roots` (and every noted one) and that
    only root or we can change; None when there is none."""
    unsafe = [*(Path(os.path.realpath(r)) for r in roots), *_workspaces]
    folders = os.environ.get("PATH", "") if search is None else search
    for entry in folders.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # the working folder, which may be the workspace
        folder = Path(os.path.realpath(entry))
        real = Path(os.path.realpath(folder / name))
        if not _runnable(real) or not all(_trusted(p) for p in (real, *real.parents)):
            continue
        if any(_within(p, r) and _ours(p) for p in (folder, real) for r in unsafe):
            continue
        return str(real)
    return None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _runnable(path: Path) -> bool:
    try:
        info = os.stat(path)
    except OSError:  # missing, or in a folder we may not enter
        return False
    return stat.S_ISREG(info.st_mode) and os.access(path, os.X_OK)


def _ours(path: Path) -> bool:
    """Whether we could change `path`: it or a folder above it is ours (all, for root)."""
    me = os.geteuid()
    for part in (path, *path.parents):
        try:
            if os.stat(part).st_uid == me:
                return True
        except OSError:
            return True  # what we cannot look at, we cannot vouch for
    return False


def _trusted(path: Path) -> bool:
    """Whether only root or we can change `path` (a real path: no link to replace). A folder
    others may write is fine when it is sticky (/tmp): they cannot rename what is ours."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    if info.st_uid not in (0, os.geteuid()):
        return False
    shared = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return not shared or (stat.S_ISDIR(info.st_mode) and bool(info.st_mode & stat.S_ISVTX))
