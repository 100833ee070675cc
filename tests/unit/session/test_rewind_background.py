"""A background task's changes between turns: kept in the last restore point, as if its
turn went on, with what they left noted (so a rewind takes them back, not for the user's);
a command's changes go to the point of the turn running when it started."""

from __future__ import annotations

import asyncio
import contextvars
from pathlib import Path

from deepacp.backends import FilesystemBackend
from deepacp.backends.protocol import ShellCommand
from deepacp.backends.shell import LocalShell
from deepacp.backends.slots import in_background
from deepacp.session.restore import (
    RecordingBackend,
    RestorePoints,
    ScanningShell,
    conflicts,
    finish_turn,
    restore,
)


def in_task(work):
    """`work` (a coroutine) as a background task's: in a context marked so."""
    context = contextvars.copy_context()
    context.run(in_background.set, True)
    return asyncio.create_task(work, context=context)


async def test_a_tasks_writes_between_turns_join_the_last_point(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "f.txt").write_text("v0\n")
    points = RestorePoints(tmp_path / "home", "s", root)
    backend = RecordingBackend(FilesystemBackend(root), points)
    points.begin("turn 1", "thread", "cp1")
    await backend.write_text("f.txt", "v1\n")
    await finish_turn(backend, points)

    await in_task(backend.write_text("f.txt", "task\n"))
    await in_task(backend.write_text("new.txt", "task\n"))
    await backend.write_text("user.txt", "not a task's\n")  # no turn, no task: not kept
    [point] = points.points
    assert set(point.before) == {"f.txt", "new.txt"} and point.before["new.txt"] is None
    assert await conflicts(backend, points.points) == []  # the task's, not the user's
    await restore(backend, points, points.points, keep=set())
    assert (root / "f.txt").read_text() == "v0\n" and not (root / "new.txt").exists()


async def test_a_tasks_command_between_turns_joins_the_last_point(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "f.txt").write_text("v0\n")
    points = RestorePoints(tmp_path / "home", "s", root)
    files = FilesystemBackend(root)
    points.begin("turn 1", "thread", "cp1")
    await finish_turn(files, points)
    shell = ScanningShell(LocalShell(root), points, files)
    run = ShellCommand("echo task > f.txt && echo made > made.txt")
    assert (await in_task(shell.execute(run))).exit_code == 0
    [point] = points.points
    assert set(point.before) == {"f.txt", "made.txt"}
    assert await conflicts(files, points.points) == []
    await restore(files, points, points.points, keep=set())
    assert (root / "f.txt").read_text() == "v0\n" and not (root / "made.txt").exists()
