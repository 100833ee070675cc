"""Rewind: put the files back as they were before a prompt (`restore`), after checking
which ones the user changed since (`conflicts`); and what a file holds now (`current`).

A file's content is what the agent sees of it: the editor's buffer when the editor offers
reads, else the disk. Files are written back through the backend (so through the editor
when it offers writes) unless they are not text, which go to disk as bytes. Both ways,
reads and writes, are confined as the file tools are: the path is resolved by the
backend (a link or a folder leading outside is refused), and the disk is reached without
following a link (`backends.nofollow`, `backends.atomic`), never the lexical path.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from deepacp.backends.atomic import replace_file
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.filesystem import decode_text
from deepacp.backends.nofollow import read_file
from deepacp.backends.protocol import MAX_TEXT_BYTES, Backend
from deepacp.session.restore.blobs import digest
from deepacp.session.restore.points import MissingContent, RestorePoint, RestorePoints
from deepacp.session.storage.records import SessionRecord

MAX_KEPT = MAX_TEXT_BYTES
"""A larger file's content is not kept (so not restored): read no more of it."""
UNREADABLE = "unreadable"
"""What `state` says of a file that cannot be read: never a content the agent left."""


async def current(backend: Backend, path: str) -> bytes | None:
    """The content of workspace file `path` as the agent sees it; None: no such file.
    A `BackendError` when it cannot be read: it leads outside, it is not a regular file
    (a FIFO is never read), or it is larger than `MAX_KEPT`."""
    try:
        return (await backend.read_text(path)).encode("utf-8")
    except NotFoundError:
        return None
    except PathError:
        raise
    except BackendError:  # not text, or too large: its bytes on disk
        pass
    root, real = on_disk(backend, path)
    try:
        return await asyncio.to_thread(read_file, root, real, MAX_KEPT)
    except NotFoundError:
        return None


def on_disk(backend: Backend, path: str) -> tuple[Path, str]:
    """Where workspace file `path` is on disk: the root, and the path under it once links
    are resolved, confined by the backend as its file tools are (`PathError` if it leads
    outside); a `BackendError` if it has no place on disk."""
    root = backend.disk_path("")
    if root is None or backend.disk_path(path) is None:
        raise BackendError(f"{path} has no place on disk")
    return root, backend.resolved_path(path)


async def finish_turn(backend: Backend, points: RestorePoints) -> None:
    """The turn ended: note what its files hold now."""
    point = points.recording
    if point is not None:
        now = {}
        for path in point.before:
            with contextlib.suppress(BackendError):  # unknown: not checked for conflicts
                now[path] = await current(backend, path)
        points.finish(now)


async def state(backend: Backend, path: str) -> str | None:
    """The SHA-256 of file `path`'s content (None: no such file), or `UNREADABLE`."""
    try:
        content = await current(backend, path)
    except BackendError:
        return UNREADABLE
    return None if content is None else digest(content)


@dataclass
class Restored:
    """What a rewind did (or would have done) to the files."""

    restored: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    """Files changed since the agent last did: left as they are unless forced."""
    failed: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    """Files whose earlier content was not kept (too large, holding a secret, over the
    budget) or is gone (a git object pruned since): left as they are."""
    fork: SessionRecord | None = None
    """The session that keeps the turns taken back."""


def plan(points: list[RestorePoint]) -> dict[str, tuple[str | None, str | None, bool]]:
    """Per file the rewound `points` changed: (blob before the first, blob the agent left
    after the last, whether that last is known)."""
    files: dict[str, tuple[str | None, str | None, bool]] = {}
    for point in points:
        for path, blob in point.before.items():
            first = files[path][0] if path in files else blob
            files[path] = (first, point.after.get(path), path in point.after)
    return files


async def conflicts(backend: Backend, points: list[RestorePoint]) -> list[str]:
    """The files the user changed after the agent last did (not the rewind's to undo)."""
    found = []
    for path, (target, left, known) in sorted(plan(points).items()):
        if known and await state(backend, path) not in (left, target):
            found.append(path)
    return found


async def restore(
    backend: Backend, store: RestorePoints, points: list[RestorePoint], keep: set[str]
) -> Restored:
    """Put each file `points` changed back as it was before the first of them, except those
    in `keep`: created files are removed, deleted ones come back."""
    lost = {path for point in points for path in point.lost}
    done = Restored(conflicts=sorted(keep), lost=sorted(lost))
    files = {path: target for path, (target, _, _) in plan(points).items() if path not in keep}
    in_git = await asyncio.to_thread(store.from_git, {t for t in files.values() if t})
    for path, target in sorted(files.items()):
        try:
            if await state(backend, path) == target:
                continue
            if target is None:
                await backend.delete(path)
            else:
                data = in_git[target] if target in in_git else store.blob(target)
                await _write(backend, path, data)
            done.restored.append(path)
        except MissingContent:
            done.lost.append(path)
        except (BackendError, OSError):
            done.failed.append(path)
    return done


async def _write(backend: Backend, path: str, data: bytes) -> None:
    try:
        text = decode_text(data, path)
    except BackendError:
        text = None
    if text is not None:
        await backend.write_text(path, text)
        return
    root, real = on_disk(backend, path)
    await asyncio.to_thread(replace_file, root, real, data)
