"""Reading a file deepacp uses for itself — a repository's `.deepacp/hooks.json` and
`.gitignore` files, `config.toml` — only if it is a regular file, and only so much of it.

A repository is written by whoever wrote it: such a name can be a link to `/dev/zero`
(endless bytes), `/dev/stdin` (the ACP pipe itself: a read swallows the editor's
requests) or a FIFO (a read that never returns). Here a link is followed only to a
regular file, which is checked before it is opened (nothing else is ever opened) and
again on the open descriptor (nothing swapped in between is read), and what is read is
capped. Callers on the event loop call `read_regular` in a thread."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""Non-blocking: opening a FIFO (swapped in after the check) does not wait for a writer."""


class NotRegularFile(OSError):
    """A device, FIFO, socket or folder where a file was expected: not read."""


class FileTooLarge(OSError):
    """A file larger than its reader's limit: not read."""


def not_regular(path: Path | str) -> NotRegularFile:
    return NotRegularFile(
        errno.EINVAL, "not a regular file: a device, FIFO or socket is never read", str(path)
    )


def read_open(fd: int, limit: int, path: Path | str) -> bytes:
    """The content of the regular file open as `fd`, at most `limit` bytes (more is
    `FileTooLarge`); anything but a regular file is `NotRegularFile`, and nothing is read."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise not_regular(path)
    if info.st_size > limit:
        raise FileTooLarge(errno.EFBIG, f"larger than {limit} bytes, not read", str(path))
    chunks, size = [], 0
    while size <= limit and (chunk := os.read(fd, min(limit + 1 - size, 1 << 20))):
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:  # it grew since fstat
        raise FileTooLarge(errno.EFBIG, f"larger than {limit} bytes, not read", str(path))
    return b"".join(chunks)


def read_regular(path: Path, limit: int) -> bytes:
    """The content of file `path` (a link is followed to a regular file only), or
    `FileNotFoundError`, `NotRegularFile`, `FileTooLarge` or another `OSError`."""
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        raise not_regular(path)
    fd = os.open(path, OPEN_FLAGS)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise not_regular(path)  # swapped since the check: whatever it is, not read
        return read_open(fd, limit, path)
    finally:
        os.close(fd)
