"""Finding the programs deepacp runs outside the sandbox (`trusted_program`, `find_git`):
never one inside a workspace root, however PATH or a link leads there, and never one that
someone but root and the user could change. The attack through the real binary is in
tests/reliability/test_git_on_path.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepacp.backends import programs
from deepacp.backends.gitview import find_git
from deepacp.backends.programs import note_workspace, trusted_program


def program(folder: Path, name: str = "tool", mode: int = 0o755) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path.resolve()


def on_path(monkeypatch: pytest.MonkeyPatch, *folders: object) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join(map(str, folders)))


@pytest.fixture(autouse=True)
def no_noted_workspaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(programs, "_workspaces", {})


def test_a_program_inside_a_workspace_is_never_found(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "ws"
    planted = program(root / "bin")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "tool").symlink_to(planted)  # a link that leads into the root
    (tmp_path / "to-bin").symlink_to(root / "bin")  # a PATH folder that leads there
    real = program(tmp_path / "system")
    on_path(monkeypatch, root / "bin", tmp_path / "links", tmp_path / "to-bin", tmp_path / "system")
    assert trusted_program("tool", [root]) == str(real)
    assert trusted_program("tool") == str(planted), "no root given or noted: it is fine"


def test_a_workspace_a_sandbox_was_made_for_counts_without_being_named(
    tmp_path: Path, monkeypatch
) -> None:
    planted, real = program(tmp_path / "ws" / "bin"), program(tmp_path / "system")
    on_path(monkeypatch, planted.parent, real.parent)
    note_workspace([tmp_path / "ws"])
    assert trusted_program("tool") == str(real)


def test_a_program_others_could_change_is_never_found(tmp_path: Path, monkeypatch) -> None:
    group_file = program(tmp_path / "group-file", mode=0o775)
    shared = program(tmp_path / "shared")
    shared.parent.chmod(0o777)  # anyone may replace it
    above = program(tmp_path / "above" / "bin")
    above.parent.parent.chmod(0o757)
    sticky = program(tmp_path / "sticky")
    sticky.parent.chmod(0o1777)  # as /tmp: no one may rename what is ours
    on_path(monkeypatch, group_file.parent, shared.parent, above.parent, "bin", "", sticky.parent)
    assert trusted_program("tool") == str(sticky)
    on_path(monkeypatch, group_file.parent, shared.parent, above.parent)
    assert trusted_program("tool") is None


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_program_of_another_user_is_never_found(tmp_path: Path, monkeypatch) -> None:
    theirs, ours = program(tmp_path / "theirs"), program(tmp_path / "ours")
    os.chown(theirs, 65534, 65534)
    on_path(monkeypatch, theirs.parent, ours.parent)
    assert trusted_program("tool") == str(ours)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make files of root's to test")
def test_a_program_in_a_workspace_that_the_user_cannot_change_is_found(
    tmp_path: Path, monkeypatch
) -> None:
    """A workspace of `/` keeps /usr/bin for an ordinary user: only root could change it."""
    root = tmp_path / "ws"
    roots_own, planted = program(root / "usr"), program(root / "bin")
    os.chown(root / "bin", 12345, 12345)
    os.chown(planted, 12345, 12345)
    monkeypatch.setattr(programs.os, "geteuid", lambda: 12345)  # we are that user
    on_path(monkeypatch, planted.parent, roots_own.parent)
    assert trusted_program("tool", [root]) == str(roots_own)


def test_a_folder_it_may_not_look_into_is_passed_over(tmp_path: Path, monkeypatch) -> None:
    """As an ordinary user with root's PATH (/root/.cargo/bin): no error, the next one."""
    hidden, real = program(tmp_path / "hidden"), program(tmp_path / "system")
    stat = os.stat

    def denied(path, *args, **kwargs):
        if str(path).startswith(str(hidden.parent)):
            raise PermissionError(13, "Permission denied", str(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(programs.os, "stat", denied)
    on_path(monkeypatch, hidden.parent, real.parent)
    assert trusted_program("tool") == str(real)


def test_find_git_is_a_trusted_git_outside_the_workspace(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "ws"
    planted, real = program(root / "bin", "git"), program(tmp_path / "system", "git")
    on_path(monkeypatch, planted.parent, real.parent)
    assert find_git([root]) == str(real)
    real.chmod(0o777)
    assert find_git([root]) is None
