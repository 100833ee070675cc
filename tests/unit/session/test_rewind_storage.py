"""Where restore points keep contents: one blob store for every session, git's own objects
for tracked files that are unchanged, and a byte budget for the copies."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from deepacp.backends import FilesystemBackend
from deepacp.session.restore import (
    BlobStore,
    RecordingBackend,
    RestorePoints,
    digest,
    discard,
    finish_turn,
    restore,
)


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


def command_changes(points: RestorePoints, root: Path, files: dict[str, bytes]) -> None:
    """One turn whose command rewrites `files`."""
    points.begin("run", "thread", None)
    stamps = points.before_command()
    for name, data in files.items():
        (root / name).write_bytes(data)
    points.after_command(stamps)
    points.finish({name: data for name, data in files.items()})


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(root)}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run(["git", "-C", str(root), *args], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


async def test_deleting_one_session_keeps_the_blobs_another_still_needs(tmp_path) -> None:
    home, root = tmp_path / "home", workspace(tmp_path)
    (root / "shared.txt").write_bytes(b"both sessions kept this\n")
    (root / "own.txt").write_bytes(b"only the first kept this\n")
    first = RestorePoints(home, "first", root)
    command_changes(first, root, {"shared.txt": b"1\n", "own.txt": b"1\n"})
    (root / "shared.txt").write_bytes(b"both sessions kept this\n")
    second = RestorePoints(home, "second", root)
    command_changes(second, root, {"shared.txt": b"2\n"})
    stored = sorted(b.name for b in first.blobs.folder.iterdir())
    contents = [b"both sessions kept this\n", b"only the first kept this\n", b"1\n"]
    assert stored == sorted(digest(c) for c in contents)  # the shared content once

    for blob in first.blobs.folder.iterdir():
        os.utime(blob, (0, 0))  # older than the sweep's grace
    discard(home, "first")
    assert not first.folder.exists()
    names = {b.name for b in second.blobs.folder.iterdir()}
    assert digest(b"only the first kept this\n") not in names  # no one else refers to it
    assert digest(b"both sessions kept this\n") in names
    done = await restore(FilesystemBackend(root), second, second.points, keep=set())
    assert done.restored == ["shared.txt"] and not done.lost
    assert (root / "shared.txt").read_bytes() == b"both sessions kept this\n"


async def test_a_clean_tracked_file_is_kept_as_its_git_object_and_comes_back(tmp_path) -> None:
    home, root = tmp_path / "home", workspace(tmp_path)
    tracked = b"tracked and committed\r\n\x00 raw bytes\n"
    (root / "tracked.bin").write_bytes(tracked)
    (root / "edited.txt").write_bytes(b"committed\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    (root / "edited.txt").write_bytes(b"edited, not staged\n")
    (root / "untracked.txt").write_bytes(b"untracked\n")
    status, index = git(root, "status", "--porcelain"), (root / ".git" / "index").read_bytes()
    refs = git(root, "show-ref")

    points = RestorePoints(home, "s", root)
    changes = {"tracked.bin": b"x", "edited.txt": b"y", "untracked.txt": b"z"}
    command_changes(points, root, changes)
    copied = {b.read_bytes() for b in points.blobs.folder.iterdir()}
    assert copied == {b"edited, not staged\n", b"untracked\n"}  # not the clean tracked file
    assert list(points.points[0].git) == [digest(tracked)]

    done = await restore(FilesystemBackend(root), points, points.points, keep=set())
    assert done.restored == sorted(changes) and not done.lost
    assert (root / "tracked.bin").read_bytes() == tracked
    assert (root / ".git" / "index").read_bytes() == index  # before git status refreshes it
    assert git(root, "status", "--porcelain") == status
    assert git(root, "show-ref") == refs and git(root, "stash", "list") == ""


async def test_a_git_object_gone_at_restore_is_reported_lost(tmp_path) -> None:
    home, root = tmp_path / "home", workspace(tmp_path)
    (root / "f.txt").write_bytes(b"committed\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    points = RestorePoints(home, "s", root)
    command_changes(points, root, {"f.txt": b"changed\n"})
    oid = points.points[0].git[digest(b"committed\n")]
    (root / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    done = await restore(FilesystemBackend(root), points, points.points, keep=set())
    assert done.lost == ["f.txt"] and not done.restored
    assert (root / "f.txt").read_bytes() == b"changed\n"


async def test_a_copy_that_would_exceed_the_budget_is_reported_lost(tmp_path) -> None:
    home, root = tmp_path / "home", workspace(tmp_path)
    (root / "small.txt").write_bytes(b"s" * 600)
    (root / "large.txt").write_bytes(b"l" * 600)
    points = RestorePoints(home, "s", root, BlobStore(home / "blobs", budget=1000))
    backend = RecordingBackend(FilesystemBackend(root), points)
    points.begin("edit both", "thread", None)
    await backend.write_text("small.txt", "new\n")
    await backend.write_text("large.txt", "new\n")
    await finish_turn(backend, points)
    assert points.blobs.used <= 1000
    assert points.points[0].lost == ["large.txt"]
    done = await restore(backend, points, points.points, keep=set())
    assert done.lost == ["large.txt"] and done.restored == ["small.txt"]
    assert (root / "small.txt").read_bytes() == b"s" * 600


def test_a_planted_fsmonitor_does_not_run_when_the_workspace_is_scanned(tmp_path) -> None:
    home, root = tmp_path / "home", workspace(tmp_path)
    (root / "f.txt").write_bytes(b"committed\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    planted = tmp_path / "ran"
    hook = root / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {planted}\n")
    hook.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(hook))  # as a command in the workspace could
    points = RestorePoints(home, "s", root)
    command_changes(points, root, {"f.txt": b"changed\n"})
    assert points.points[0].git  # git was asked
    assert not planted.exists()


def test_blobs_held_for_unchanged_files_survive_a_sweep_until_the_session_closes(
    tmp_path,
) -> None:
    home, root = tmp_path / "home", workspace(tmp_path)
    (root / "f.txt").write_bytes(b"not changed yet\n")
    points = RestorePoints(home, "s", root)
    points.begin("run", "thread", None)
    points.before_command()  # the baseline: kept, not yet referred to by a point
    for blob in points.blobs.folder.iterdir():
        os.utime(blob, (0, 0))
    points.blobs.sweep(home / "rewind" / "sessions")
    assert points.blobs.has(digest(b"not changed yet\n"))
    points.release()
    points.blobs.sweep(home / "rewind" / "sessions")
    assert not points.blobs.has(digest(b"not changed yet\n"))


async def test_commands_run_at_once_each_get_their_scan(tmp_path: Path) -> None:
    """Scans around commands run at once take turns: none trips over another's files."""
    from deepacp.backends.protocol import ShellCommand
    from deepacp.backends.shell import LocalShell
    from deepacp.session.restore import RestorePoints, ScanningShell

    root = tmp_path / "ws"
    root.mkdir()
    for n in range(20):
        (root / f"f{n}.txt").write_text(f"{n}\n")
    points = RestorePoints(tmp_path / "home", "s1", root)
    points.begin("go", "t1", None)
    shell = ScanningShell(LocalShell(root), points, FilesystemBackend(root))
    runs = [shell.execute(ShellCommand(f"echo {n} > made{n}.txt")) for n in range(8)]
    results = await asyncio.gather(*runs)
    assert [r.exit_code for r in results] == [0] * 8
    assert {f"made{n}.txt" for n in range(8)} <= set(points.recording.before)
