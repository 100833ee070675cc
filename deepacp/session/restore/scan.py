"""What the workspace looks like around a command, to find what the command created,
changed or deleted (`changed`).

In a git work tree git says which tracked files differ from its index (its stat cache does
the work) and which files are untracked; the other tracked files hold their index objects
and are not looked at. Outside git, in a folder holding another repository and in a
submodule, every file is walked (honouring .gitignore) and its stamp taken, as git does not
look there. When the kernel says nothing changed since the last scan (`watch.py`), that
scan is the answer.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from deepacp.backends.atomic import in_write_folder
from deepacp.backends.errors import BackendError
from deepacp.backends.nofollow import read_file
from deepacp.backends.protocol import MAX_TEXT_BYTES
from deepacp.backends.pysearch import is_excluded, path_order, walk_files
from deepacp.session.restore.gitobjects import GitObjects, object_id
from deepacp.session.restore.watch import Watch

MAX_SCAN_FILES = 50_000
"""A scan stamps no more files than this (a home folder opened as a project)."""

Stamp = tuple[int, int, int, int]
"""What a scan compares: size, modification and change times (ns), inode."""
State = Stamp | str | None
"""A file as a scan saw it: its stamp, the git object it holds, or None (no file)."""


@dataclass(frozen=True)
class Snapshot:
    """The workspace as one scan saw it."""

    view: str | None
    """How it was seen: the repository's top, the root's place in it and its index (None:
    walked). Two snapshots seen alike are compared by what git said."""
    algorithm: str
    objects: Mapping[str, str]
    """Tracked files that hold their index object when git finds them unchanged: the
    object's id (not looked at)."""
    stamps: dict[str, Stamp | None]
    """The files looked at: their stamps (None: no regular file there)."""
    reported: frozenset[str] = frozenset()
    """The tracked files git found changed."""
    horizon: str | None = None
    """With more files than `MAX_SCAN_FILES`: the last looked at (a `path_order` key);
    later paths are not compared. None: all were looked at."""

    def state(self, path: str) -> State:
        if path in self.stamps:
            return self.stamps[path]
        return self.objects.get(path)

    def sees(self, path: str) -> bool:
        return self.horizon is None or path_order(path) <= self.horizon


def stamp_of(root: Path, path: str) -> Stamp | None:
    try:
        info = os.stat(os.path.join(root, path), follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def real_folder(root: Path, folder: str) -> bool:
    """Whether workspace path `folder` is a folder reached without following a link (a
    submodule's may have been swapped for a link leading outside)."""
    path = root
    for part in folder.split("/"):
        path = path / part
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


class Scanner:
    """Scans of workspace `root`, leaving out the folders `exclude` (workspace paths)."""

    def __init__(self, root: Path, git: GitObjects, exclude: tuple[str, ...] = ()) -> None:
        self.root = root
        self.git = git
        self.exclude = exclude
        self.watch = Watch(root, exclude)
        self._last: Snapshot | None = None
        """The last scan, while the watch says nothing changed since it began."""
        self.closed = False
        """No more scans are expected: the watch is let go after each."""

    def scan(self) -> Snapshot:
        if self._last is not None and not self.git.moved() and self.watch.quiet():
            return self._last
        self._last = None  # a scan that fails after the watch is armed leaves none
        repository = self.git.locate()
        index = () if repository is None else (repository.index.parent,)
        self.watch.arm(self.git.ignored_folders, index)
        snapshot = self._last = self._through_git() or self._walked()
        if self.closed:
            self.close()
        return snapshot

    def close(self) -> None:
        """Let the watch go (called between scans)."""
        self.closed = True
        self.watch.close()
        self._last = None

    def _through_git(self) -> Snapshot | None:
        repository = self.git.locate()
        if repository is None:
            return None
        index = self.git.index(repository)
        changes = self.git.changes() if index is not None else None
        if index is None or changes is None:
            return None
        objects, watched = self.git.trusted(index)
        links = set(index.gitlinks)
        paths = {*changes.modified, *watched, *changes.untracked} - links
        for folder in [*changes.nested, *links]:  # git does not look inside: walk them
            if real_folder(self.root, folder):
                paths.update(itertools.islice(self._walk(folder), MAX_SCAN_FILES + 1))
        view = f"{repository.top}\0{repository.prefix}\0{repository.index}"
        return self._stamped(paths, view, repository.algorithm, objects, changes.modified)

    def _walk(self, folder: str = "") -> Iterable[str]:
        return walk_files(self.root, folder, exclude=self.exclude)

    def _walked(self) -> Snapshot:
        paths = itertools.islice(self._walk(), MAX_SCAN_FILES + 1)
        return self._stamped(paths, None, "sha1", {}, frozenset())

    def _stamped(
        self,
        paths: Iterable[str],
        view: str | None,
        algorithm: str,
        objects: Mapping[str, str],
        reported: frozenset[str],
    ) -> Snapshot:
        kept = (p for p in paths if not is_excluded(p, self.exclude) and not in_write_folder(p))
        ordered = sorted(kept, key=path_order)
        horizon = None
        if len(ordered) > MAX_SCAN_FILES:
            ordered = ordered[:MAX_SCAN_FILES]
            horizon = path_order(ordered[-1])
        stamps = {path: stamp_of(self.root, path) for path in ordered}
        return Snapshot(view, algorithm, objects, stamps, reported, horizon)


def changed(before: Snapshot, after: Snapshot, root: Path) -> list[str]:
    """The files of workspace `root` that differ between two snapshots of it, in path
    order."""
    paths = before.stamps.keys() | after.stamps.keys()
    if before.view != after.view:  # a repository made, removed or moved: compare all
        paths |= before.objects.keys() | after.objects.keys()
    elif before.objects is not after.objects:  # the index changed (checkout, stash, add)
        was, now = before.objects, after.objects
        paths |= {p for p in was.keys() | now.keys() if was.get(p) != now.get(p)}
    found = (p for p in paths if before.sees(p) and after.sees(p))
    return sorted((p for p in found if _differs(p, before, after, root)), key=path_order)


def _differs(path: str, before: Snapshot, after: Snapshot, root: Path) -> bool:
    was, now = before.state(path), after.state(path)
    if was is None or now is None or type(was) is type(now):
        return was != now
    if isinstance(was, tuple):  # now unchanged from the index: is it the file seen before?
        return stamp_of(root, path) != was
    if path in after.reported and after.objects.get(path) == was:
        return True  # git says it is no longer that object
    return not _holds(root, path, was, before.algorithm)


def _holds(root: Path, path: str, oid: str, algorithm: str) -> bool:
    """Whether workspace file `path` holds the git object `oid` (read without following
    a link)."""
    with contextlib.suppress(BackendError, OSError):
        return object_id(read_file(root, path, MAX_TEXT_BYTES), algorithm) == oid
    return False
