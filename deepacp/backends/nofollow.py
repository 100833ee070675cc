"""Opening a workspace file by a path already resolved and confined (`paths.confine`)
without following any link: each folder on the way is opened from the root with
O_NOFOLLOW, and the file itself too. A link met on the way was put there since the path
was resolved (a folder swapped for a link to another one, say): refused, never followed.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.regular import OPEN_FLAGS, NotRegularFile, read_open

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def split(relative: str) -> tuple[str, str]:
    """(the folder, the name) of a workspace path."""
    folder, _, name = relative.rpartition("/")
    return folder, name


def descend(fd: int, names: Iterable[str], open_child: Callable[[int, str], int]) -> int:
    """The folder reached from the open folder `fd` through `names`, each opened in the
    one before by `open_child(parent, name)`; `fd` is closed, also when a step fails."""
    try:
        for name in names:
            child = open_child(fd, name)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _child(parent: int, name: str, create: bool) -> int:
    """The folder `name` in `parent`, never a link; `create`: made first if missing."""
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=parent)
        return os.open(name, FOLDER_FLAGS, dir_fd=parent)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, "a symbolic link") from None
        raise


def _walk(root: Path, folder: str, create: bool) -> int:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return descend(
        fd, folder.split("/") if folder else (), functools.partial(_child, create=create)
    )


@contextlib.contextmanager
def open_folder(root: Path, folder: str, *, create: bool = False) -> Iterator[int]:
    """A descriptor of workspace folder `folder` ("" the root itself) under the resolved
    `root`; `create`: make the folders missing on the way (as `mkdir -p` does)."""
    try:
        fd = _walk(root, folder, create)
    except OSError as exc:
        raise refused(folder, exc) from None
    try:
        yield fd
    finally:
        os.close(fd)


def refused(relative: str, exc: OSError) -> BackendError:
    """The backend error for `exc`, met opening workspace path `relative`."""
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(f"{relative or '.'}: no such file or directory")
    if exc.errno == errno.ELOOP:
        return PathError(f"{relative}: a symbolic link is on the way; it is not followed")
    if isinstance(exc, NotRegularFile):
        return BackendError(f"{relative} is not a regular file")
    return BackendError(f"{relative}: {exc.strerror or exc}")


def read_file(root: Path, relative: str, limit: int) -> bytes:
    """The bytes of regular file `relative` (at most `limit`), or a `BackendError`: a
    link, a FIFO or a device is never read."""
    folder, name = split(relative)
    with open_folder(root, folder) as parent:
        try:
            fd = os.open(name, OPEN_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
            try:
                return read_open(fd, limit, relative)
            finally:
                os.close(fd)
        except OSError as exc:
            raise refused(relative, exc) from None
