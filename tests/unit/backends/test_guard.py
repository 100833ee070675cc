"""The accept-edits guard's parts: what git reads (by its rules and by asking it), removing
what a command left without following links or minding the modes it set, and saying what
could not be undone (the attacks through the real binary are in
tests/reliability/test_git_guard.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepacp.backends.gitview import find_git, git_reads
from deepacp.backends.guard import GuardBreach, guard_of
from deepacp.backends.undo import MAX_DEPTH, capture, remove

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    folder = (tmp_path / "ws").resolve()
    folder.mkdir()
    yield folder
    for base, dirs, _ in os.walk(tmp_path):  # what a test locked, so pytest can clean up
        for name in dirs:
            os.chmod(Path(base) / name, 0o755)


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


@needs_git
def test_what_git_reads_is_asked_of_git_and_worked_out_without_it(root: Path, monkeypatch) -> None:
    git(root, "init", "-q", ".")
    git(root, "config", "include.path", "../local.cfg")
    git(root, "config", "core.hooksPath", ".husky")
    asked = git_reads(root, [root])
    dotgit = root / ".git"
    assert {dotgit / "config", dotgit / "commondir", root / "local.cfg"} <= set(asked.files)
    assert dotgit / "objects" / "info" / "alternates" in asked.files
    assert {dotgit / "worktrees", dotgit / "modules", root / ".husky"} <= set(asked.folders)
    assert asked.said[:3] == (str(dotgit), str(dotgit), str(root / ".husky"))
    monkeypatch.setenv("PATH", "")  # no git: the places by git's rules remain
    alone = git_reads(root, [root])
    assert alone.said == () and {dotgit / "config", dotgit / "commondir"} <= set(alone.files)


def test_a_git_file_names_the_gitdir_that_counts(root: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "")
    (root / "elsewhere").mkdir()
    (root / ".git").write_text("gitdir: ./elsewhere\n")
    (root / "elsewhere" / "commondir").write_text("../shared\n")
    reads = git_reads(root, [root])
    assert root / ".git" in reads.files  # the file itself is read-only to a command
    assert {root / "elsewhere" / "config.worktree", root / "shared" / "config"} <= set(reads.files)
    assert root / "shared" / "hooks" in reads.hooks


def test_no_git_inside_the_workspace_is_asked(root: Path, monkeypatch) -> None:
    planted = root / "bin"
    planted.mkdir()
    (planted / "git").write_text("#!/bin/sh\ntouch ran\n")
    (planted / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.environ['PATH']}")
    found = find_git([root])
    assert found is None or not Path(found).resolve().is_relative_to(root)


def test_a_removal_minds_no_mode_the_command_set(root: Path) -> None:
    vscode = root / ".vscode" / "deep"
    vscode.mkdir(parents=True)
    (vscode / "tasks.json").write_text("{}")
    (root / ".vscode" / "deep").chmod(0o000)
    (root / ".vscode").chmod(0o555)
    (root / ".nvim.lua").write_text("x")
    root.chmod(0o555)
    try:
        assert remove(root, root / ".vscode") and remove(root, root / ".nvim.lua")
    finally:
        root.chmod(0o755)
    assert not (root / ".vscode").exists() and not (root / ".nvim.lua").exists()


def test_a_removal_follows_no_link(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "other-project"
    (outside / ".deepacp").mkdir(parents=True)
    (outside / ".deepacp" / "hooks.json").write_text("{}")
    (root / ".deepacp").symlink_to(outside / ".deepacp")
    assert not remove(root, root / ".deepacp" / "hooks.json")
    assert (outside / ".deepacp" / "hooks.json").exists()
    assert capture(root, root / ".deepacp" / "hooks.json").kind == "absent"
    assert remove(root, root / ".deepacp") and (outside / ".deepacp").is_dir()


def test_what_cannot_be_removed_is_said_and_held(root: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "")
    breach = GuardBreach()
    guard = guard_of([root], breach)
    deep = root / ".vscode"
    for _ in range(MAX_DEPTH + 2):
        deep = deep / "d"
    deep.mkdir(parents=True)
    outcome = guard.settle()
    assert outcome.failed and ".vscode" in outcome.failed[0]
    assert "FAILED to undo" in outcome.note(root)
    notice = outcome.notice("A command", root)
    assert notice is not None and "next command will be asked" in notice
    assert breach.take() is not None and breach.take() is None


def test_a_created_git_place_is_removed_and_a_moved_gitdir_is_said(root: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    guard = guard_of([root], GuardBreach())
    assert root / ".git" / "config" in guard.bound and root / ".git" / "commondir" in guard.missing
    (root / ".git" / "commondir").write_text("../evil\n")
    outcome = guard.settle()
    assert outcome.removed == (root / ".git" / "commondir",) and not outcome.failed
    (root / "b").mkdir()
    (root / "b" / "config").write_text("[core]\n")
    guard = guard_of([root], GuardBreach())
    os.rename(root / ".git", root / "a")  # what a bind mount stops in the sandbox
    (root / ".git").symlink_to("b")
    outcome = guard.settle()
    assert outcome.failed and "git now reads" in outcome.failed[0], outcome.failed
