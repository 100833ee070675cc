"""A command's scan before it is the last command's after it only while the kernel says
nothing changed in between: what the user changes between two commands is never taken for
the second command's, in a git checkout and outside git."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from deepacp.session.restore import RestorePoints, gitrun, watch

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
ENV |= {"GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}
FILES = {
    "a.txt": "a\n",
    "b.txt": "b\n",
    "src/c.py": "C = 1\n",
    "build/out.txt": "built\n",
    ".gitignore": "build/\n",
}


def git(root: Path, *args: str) -> None:
    env = {**os.environ, **ENV, "HOME": str(root.parent)}
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


@pytest.fixture(params=["git", "plain"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    hour_ago = time.time() - 3600
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        os.utime(root / name, (hour_ago, hour_ago))
    (root / "empty").mkdir()
    if request.param == "git":
        git(root, "init", "-q")
        git(root, "add", ".")
        git(root, "commit", "-qm", "start")
    return root


def command(points: RestorePoints, change: Callable[[], object]) -> list[str]:
    """What the scans around a command making `change` say it changed."""
    before = points.before_command()
    change()
    return points.after_command(before)


def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The git runs started from now on."""
    runs: list[tuple[str, ...]] = []
    start = gitrun.Git.start

    def counted(self: gitrun.Git, args: tuple[str, ...], *more: object, **kw: object) -> object:
        runs.append(tuple(args))
        return start(self, args, *more, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitrun.Git, "start", counted)
    return runs


USER_CHANGES: dict[str, Callable[[Path], object]] = {
    "edits a file": lambda root: (root / "a.txt").write_text("the user's\n"),
    "touches a file": lambda root: os.utime(root / "a.txt"),
    "deletes a file": lambda root: (root / "b.txt").unlink(),
    "writes in an empty folder": lambda root: (root / "empty" / "new.txt").write_text("n\n"),
    "makes a folder": lambda root: (root / "new" / "deep").mkdir(parents=True),
    "renames a folder": lambda root: (root / "src").rename(root / "lib"),
    "unignores a folder": lambda root: (root / ".gitignore").write_text(""),
}


@pytest.mark.parametrize("user", USER_CHANGES)
def test_what_the_user_changes_between_commands_is_not_the_next_commands(
    root: Path, tmp_path: Path, user: str
) -> None:
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    assert command(points, lambda: (root / "first.txt").write_text("1\n")) == ["first.txt"]
    USER_CHANGES[user](root)
    if user == "makes a folder":
        (root / "new" / "deep" / "user.txt").write_text("the user's\n")
    assert command(points, lambda: (root / "second.txt").write_text("2\n")) == ["second.txt"]
    assert points.recording is not None
    assert sorted(points.recording.before) == ["first.txt", "second.txt"]


def test_a_folder_a_command_makes_is_watched(root: Path, tmp_path: Path) -> None:
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)

    def make() -> None:
        (root / "made" / "inner").mkdir(parents=True)
        (root / "made" / "inner" / "x.txt").write_text("x\n")

    assert command(points, make) == ["made/inner/x.txt"]
    (root / "made" / "inner" / "user.txt").write_text("the user's\n")
    assert command(points, lambda: (root / "a.txt").write_text("cmd\n")) == ["a.txt"]


def test_the_index_the_user_changes_between_commands_is_seen(root: Path, tmp_path: Path) -> None:
    if not (root / ".git").exists():
        pytest.skip("a git checkout's index")
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    command(points, lambda: None)
    (root / "a.txt").write_text("staged by the user\n")
    git(root, "add", "a.txt")
    assert command(points, lambda: (root / "b.txt").write_text("cmd\n")) == ["b.txt"]
    assert points.recording is not None and "a.txt" not in points.recording.before


def test_a_quiet_checkout_runs_no_git_before_a_command(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan after a command is the next one's before it: one scan a command, not two."""
    if not (root / ".git").exists():
        pytest.skip("git runs")
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    command(points, lambda: (root / "a.txt").write_text("1\n"))
    runs = started(monkeypatch)
    before = points.before_command()
    assert runs == []
    (root / "b.txt").write_text("2\n")
    assert points.after_command(before) == ["b.txt"]
    assert runs


def test_without_a_watch_every_command_is_scanned_twice(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the share of the user's inotify watches it may take, nothing is watched."""
    if not (root / ".git").exists():
        pytest.skip("git runs")
    monkeypatch.setattr(watch, "watch_budget", lambda: 1)
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    command(points, lambda: (root / "a.txt").write_text("1\n"))
    runs = started(monkeypatch)
    points.before_command()
    assert runs
    (root / "a.txt").write_text("the user's\n")
    assert command(points, lambda: (root / "b.txt").write_text("2\n")) == ["b.txt"]


def test_a_closed_session_lets_its_watch_go(root: Path, tmp_path: Path) -> None:
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    command(points, lambda: None)
    assert points.scanner.watch._fd is not None
    points.release()
    assert points.scanner.watch._fd is None


def test_a_scan_after_the_session_closed_still_answers(root: Path, tmp_path: Path) -> None:
    """A background task's command may end after its session closed."""
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    points.release()
    assert command(points, lambda: (root / "late.txt").write_text("late\n")) == ["late.txt"]
    assert points.scanner.watch._fd is None


def test_a_write_on_its_way_while_a_command_runs_is_not_a_file_to_restore(
    root: Path, tmp_path: Path
) -> None:
    """An edit made beside a command (parallel tool calls) writes in a private folder, then
    renames: the command's first scan may catch it there. That folder is no file of the
    workspace, or a rewind would make it again, holding the edit."""
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    on_its_way = root / ".a.txt.0123abcd.tmp"
    on_its_way.mkdir()
    (on_its_way / "a.txt").write_text("the edit\n")

    def landed() -> None:
        (on_its_way / "a.txt").rename(root / "a.txt")
        on_its_way.rmdir()

    assert command(points, landed) == ["a.txt"]
    assert points.recording is not None and sorted(points.recording.before) == ["a.txt"]
