"""Recording what each turn changes in the workspace: `RecordingBackend` keeps a file's
content before a turn's first write or delete of it, and `ScanningShell` finds what a
command created, changed or deleted by scanning the workspace before and after it
(`RestorePoints.before_command`) — unless it runs over an LSP proposal, whose overlay takes
what it writes and leaves the disk as it is."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from deepacp.backends.base import DelegatingBackend
from deepacp.backends.errors import BackendError
from deepacp.backends.proposal_shell import ProposalShell
from deepacp.backends.protocol import Backend, ExecuteResult, Shell, ShellCommand
from deepacp.backends.slots import in_background
from deepacp.session.restore.points import RestorePoint, RestorePoints
from deepacp.session.restore.rewind import current

T = TypeVar("T")


def changes_disk(shell: Shell, run: ShellCommand) -> bool:
    """Whether `run` may change the files on disk (not when it runs over a proposal)."""
    return not isinstance(shell, ProposalShell) or shell.on_disk(run) is not None


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
        if point is None or not changes_disk(self.inner, run):
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
