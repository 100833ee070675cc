"""Rewind: record what each turn changes in the workspace (`RecordingBackend`), and put
the files back as they were before a prompt (`restore`).

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from deepacp.backends.atomic import replace_file
from deepacp.backends.base import DelegatingBackend
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.filesystem import decode_text
from deepacp.backends.nofollow import read_file
from deepacp.backends.protocol import (
    MAX_TEXT_BYTES,
    Backend,
    ExecuteResult,
    Shell,
    ShellCommand,
)
from deepacp.backends.slots import in_background
from deepacp.session.blobs import digest
from deepacp.session.snapshots import MissingContent, RestorePoint, RestorePoints
from deepacp.session.storage.records import SessionRecord

T = TypeVar("T")


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


class ScanningShell:
    """A shell whose commands are bracketed by workspace scans, so that what they create,
    change or delete is kept in the restore point of the turn running when they start
    (a background task's, between turns: in the last one, see `RestorePoints.target`).
    `files` reads what a command left, as the agent sees it."""

    def __init__(self, inner: Shell, points: RestorePoints, files: Backend) -> None:
        self.inner = inner
        self.points = points
        self.files = files

    async def execute(self, run: ShellCommand) -> ExecuteResult:
        point = self.points.target(late=in_background.get())
        if point is None:
            return await self.inner.execute(run)
        before = await asyncio.to_thread(self._in_turn, self.points.before_command)
        try:
            return await self.inner.execute(run)
        finally:
            after = self.points.after_command
            changed = await asyncio.shield(asyncio.to_thread(self._in_turn, after, before, point))
            if point is not self.points.recording:  # a late change: note what it left
                for path in changed:
                    self.points.settle(point, path, await current(self.files, path))

    def _in_turn(self, scan: Callable[..., T], *args: Any) -> T:
        """`scan` while no other command's scan runs (they share the restore point)."""
        with self.points.scanning:
            return scan(*args)


class RecordingBackend(DelegatingBackend[Backend]):
    """The session's backend, keeping each workspace file's content before a turn's first
    write or delete of it (edits write, so they count too), and scanning around commands."""

    def __init__(self, inner: Backend, points: RestorePoints) -> None:
        super().__init__(inner)
        self.points = points

    @property
    def shell(self) -> Shell | None:
        inner = self.inner.shell
        return None if inner is None else ScanningShell(inner, self.points, self.inner)

    def relative(self, path: str) -> str | None:
        """`path` relative to the workspace root, or None when it lives elsewhere."""
        try:
            disk = self.inner.disk_path(path)
        except BackendError:
            return None
        if disk is None:
            return None
        try:
            return disk.relative_to(self.points.root).as_posix()
        except ValueError:
            return None

    async def _keep(self, path: str) -> tuple[RestorePoint, str] | None:
        """Keep `path`'s content before the change about to be made, in the point
        `RestorePoints.target` names; that point and the relative path (None: not kept)."""
        relative = self.relative(path)
        point = self.points.target(late=in_background.get())
        if relative is None or point is None:
            return None
        if self.points.changing(relative, point):
            try:
                content = await current(self.inner, relative)
            except BackendError:  # it leads outside, is no regular file, or is too large
                self.points.lose(relative, point)
                return point, relative
            name = None if content is None else self.points.keep(relative, content)
            if content is not None and name is None:
                self.points.lose(relative, point)
            else:
                self.points.note(relative, name, point)
        return point, relative

    async def _settle(self, kept: tuple[RestorePoint, str] | None) -> None:
        """After a late change (its point's turn has ended): note what it left."""
        if kept is not None and kept[0] is not self.points.recording:
            point, relative = kept
            try:
                now = await current(self.inner, relative)
            except BackendError:  # what it left cannot be read back: it cannot be restored
                self.points.lose(relative, point)
                return
            self.points.settle(point, relative, now)

    async def write_text(self, path: str, content: str) -> None:
        kept = await self._keep(path)
        await self.inner.write_text(path, content)
        await self._settle(kept)

    async def delete(self, path: str) -> None:
        kept = await self._keep(path)
        await self.inner.delete(path)
        await self._settle(kept)


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
    for path, (target, _, _) in sorted(plan(points).items()):
        if path in keep:
            continue
        try:
            if await state(backend, path) == target:
                continue
            if target is None:
                await backend.delete(path)
            else:
                await _write(backend, path, store.blob(target))
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
