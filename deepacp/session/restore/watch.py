"""Whether anything a scan looks at changed since the last scan, as the kernel tells it
(Linux inotify): when nothing did, the scan before a command is the one made after the last
command, and only one walk of the workspace is paid a command.

Watched: every folder of the workspace but git's own (`.git`), the folders git ignores
(no file in them is scanned) and those left out; and the folder holding the index. Any
change there (a file written, made, removed or renamed, its metadata changed, a watched
folder gone, the queue overflowing) counts, however harmless: the next scan is made. A
folder made, or a `.gitignore` changed, has the watches set again before that scan.

It never says "nothing changed" where it cannot know: off Linux, on a filesystem whose
changes may come from another machine (only local filesystems are watched), when inotify
refuses (no instance or watch left), with more folders than a small share of the user's
watches, or past `MAX_INSTANCES` workspaces watched at once (the user's editor needs its
own). What inotify does not report either — a
write through a shared memory map — is not seen until the next scan made anyway.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

IN_MODIFY, IN_ATTRIB, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x4, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_NONBLOCK, IN_CLOEXEC = 0x1000000, 0x2000000, 0o4000, 0o2000000
CHANGES = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
CHANGES |= IN_DELETE_SELF | IN_MOVE_SELF
RESET = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
"""Events after which the watches no longer cover every folder: set them again."""
EVENT = struct.Struct("iIII")
LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "f2fs", "zfs", "bcachefs"}
)
WATCH_SHARE = 8
"""At most this share of the user's inotify watches (`max_user_watches`) is taken."""
MAX_INSTANCES = 8
"""At most this many inotify instances a process (the user has 128 in all, by default)."""
_instances = threading.BoundedSemaphore(MAX_INSTANCES)


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        return libc
    except (OSError, AttributeError):
        return None


def filesystem(path: Path) -> str | None:
    """The type of the filesystem `path` is on (None: unknown)."""
    found, depth = None, -1
    with contextlib.suppress(OSError), open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) < 3:
                continue
            point = Path(fields[1].replace("\\040", " "))
            if (point == path or point in path.parents) and len(point.parts) > depth:
                found, depth = fields[2], len(point.parts)
    return found


def watch_budget() -> int:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as limit:
            return int(limit.read()) // WATCH_SHARE
    except (OSError, ValueError):
        return 0


class Watch:
    """The changes under workspace `root` since `arm`, leaving out the folders `exclude`
    (workspace paths)."""

    def __init__(self, root: Path, exclude: tuple[str, ...] = ()) -> None:
        self.root = root
        self.exclude = exclude
        self._fd: int | None = None
        self._reset = True
        """The watches must be set again (none yet, a folder made or gone, ...)."""
        self._changed = True
        """Something changed since `arm` (or nothing is watched)."""

    def quiet(self) -> bool:
        """Whether nothing watched changed since the last `arm`."""
        self._read()
        return not self._changed

    def arm(self, ignored: Callable[[], Iterable[str]], also: Iterable[Path] = ()) -> None:
        """Start counting changes from now (called right before a scan); `ignored`: the
        workspace folders no scan looks into, asked only when the watches are set again;
        `also`: more folders to watch (the index's)."""
        self._read()
        if self._reset:
            self.close()
            self._fd = self._watch(ignored, also)
            self._reset = self._fd is None
        self._changed = self._fd is None

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
            _instances.release()
        self._reset = self._changed = True

    def __del__(self) -> None:
        self.close()

    def _read(self) -> None:
        """Take the events waiting; note whether the watches must be set again."""
        while self._fd is not None:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self.close()
                return
            at = 0
            while at + EVENT.size <= len(data):
                _, mask, _, size = EVENT.unpack_from(data, at)
                name = data[at + EVENT.size : at + EVENT.size + size].rstrip(b"\0")
                at += EVENT.size + size
                self._changed = True
                made = mask & (IN_CREATE | IN_MOVED_TO) and mask & IN_ISDIR
                if mask & RESET or made or name == b".gitignore":
                    self._reset = True

    def _watch(self, ignored: Callable[[], Iterable[str]], also: Iterable[Path]) -> int | None:
        """A new inotify instance watching every folder a scan looks into; None when that
        cannot be done."""
        libc = _libc()
        if libc is None or filesystem(self.root) not in LOCAL_FILESYSTEMS:
            return None
        if not _instances.acquire(blocking=False):
            return None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0 or not self._watch_all(libc, fd, ignored, also):
            if fd >= 0:
                os.close(fd)
            _instances.release()
            return None
        return fd

    def _watch_all(
        self, libc: ctypes.CDLL, fd: int, ignored: Callable[[], Iterable[str]], also: Iterable[Path]
    ) -> bool:
        """Whether `fd` now watches every folder a scan looks into."""
        budget = watch_budget()
        mask = CHANGES | IN_ONLYDIR | IN_DONT_FOLLOW
        skipped = {*self.exclude, *(path.rstrip("/") for path in ignored())}
        folders: list[tuple[Path, str | None]] = [(self.root, "")]
        extra: list[tuple[Path, str | None]] = [(Path(folder), None) for folder in also]
        count = 0
        while folders or extra:
            path, rel = folders.pop() if folders else extra.pop()
            count += 1
            if count > budget or libc.inotify_add_watch(fd, os.fsencode(path), mask) < 0:
                return False
            if rel is None:
                continue
            try:
                entries = list(os.scandir(path))  # listed after the watch: none is missed
            except OSError:
                return False
            for entry in entries:
                inner = f"{rel}/{entry.name}" if rel else entry.name
                if entry.name != ".git" and inner not in skipped and _is_folder(entry):
                    folders.append((Path(entry.path), inner))
        return True


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)  # the listing's type: no stat
    except OSError:
        return False
