"""Wrapping backends: the shell is passed on (or replaced) by type, never by a copied flag,
and a wrapper changes only what it overrides."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from deepacp.backends import (
    Backend,
    CommandRule,
    CompositeBackend,
    DelegatingBackend,
    EditorBackend,
    FilesystemBackend,
    LocalShellBackend,
    PermissionBackend,
    PermissionDenied,
    ShellCommand,
    StateBackend,
    TerminalStatus,
)
from deepacp.backends.overlay import OverlayBackend
from deepacp.backends.permissions import tool_call_scope
from deepacp.harness.names import EXECUTE
from deepacp.harness.tools import filesystem_tools


class TerminalOnly:
    """An editor that offers its terminal but not its files (never used to run here)."""

    can_read = can_write = False
    can_run = True

    async def read_text_file(self, path: str) -> str:
        raise AssertionError("not offered")

    async def write_text_file(self, path: str, content: str) -> None:
        raise AssertionError("not offered")

    async def create_terminal(self, argv: Sequence[str], cwd: str, output_limit: int) -> str:
        raise AssertionError("not run")

    async def wait_for_exit(self, terminal_id: str) -> None: ...

    async def terminal_status(self, terminal_id: str) -> TerminalStatus:
        raise AssertionError("not run")

    async def kill_terminal(self, terminal_id: str) -> None: ...

    async def release_terminal(self, terminal_id: str) -> None: ...


def wrapped(kind: str, root: Path) -> Backend:
    disk, shell = FilesystemBackend(root), LocalShellBackend(root)
    return {
        "composite over a shell": lambda: CompositeBackend(shell, {"/s/": StateBackend("/s/")}),
        "composite over a disk": lambda: CompositeBackend(disk, {"/s/": StateBackend("/s/")}),
        "permissions over a shell": lambda: PermissionBackend(shell, []),
        "permissions over a disk": lambda: PermissionBackend(disk, []),
        "overlay over a shell": lambda: OverlayBackend(shell),
        "overlay over a disk": lambda: OverlayBackend(disk),
        "editor terminal over a disk": lambda: EditorBackend(disk, TerminalOnly()),
        "all of them": lambda: PermissionBackend(
            CompositeBackend(OverlayBackend(shell), {"/s/": StateBackend("/s/")}), []
        ),
    }[kind]()


@pytest.mark.parametrize(
    ("kind", "has_shell"),
    [
        ("composite over a shell", True),
        ("composite over a disk", False),
        ("permissions over a shell", True),
        ("permissions over a disk", False),
        ("overlay over a shell", True),
        ("overlay over a disk", False),
        ("editor terminal over a disk", True),
        ("all of them", True),
    ],
)
def test_execute_is_offered_exactly_when_there_is_a_shell(
    tmp_path: Path, kind: str, has_shell: bool
) -> None:
    backend = wrapped(kind, tmp_path)
    assert (backend.shell is not None) is has_shell
    assert (EXECUTE in {t.name for t in filesystem_tools(backend)}) is has_shell


async def test_commands_run_in_the_default_backends_shell(tmp_path: Path) -> None:
    backend = wrapped("all of them", tmp_path)
    (tmp_path / "here.txt").write_text("on disk\n")
    assert backend.shell is not None
    result = await backend.shell.execute(ShellCommand("cat here.txt; pwd"))
    assert result.output == f"on disk\n{tmp_path.resolve()}\n"


async def test_the_permission_wrapper_polices_the_shell_it_passes_on(tmp_path: Path) -> None:
    rules = [CommandRule(("echo ok",), "allow"), CommandRule(("rm *",), "deny")]
    rules.append(CommandRule(("ls *",), "interrupt"))
    shell = PermissionBackend(LocalShellBackend(tmp_path), rules).shell
    assert shell is not None
    assert (await shell.execute(ShellCommand("echo ok"))).output == "ok\n"
    with pytest.raises(PermissionDenied, match="does not permit running: rm -rf x"):
        await shell.execute(ShellCommand("rm -rf x"))
    with pytest.raises(PermissionDenied):
        await shell.execute(ShellCommand("ls"))  # asks: refused outside a tool call
    with tool_call_scope():  # the approval layer has let this call run
        assert (await shell.execute(ShellCommand("ls"))).exit_code == 0


class Shouting(DelegatingBackend[Backend]):
    """Reads in capitals; everything else is the inner backend's."""

    async def read_text(self, path: str) -> str:
        return (await self.inner.read_text(path)).upper()


async def test_a_wrapper_that_changes_reads_changes_edits_too(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    backend = Shouting(FilesystemBackend(tmp_path))
    assert await backend.edit("a.txt", "HELLO", "bye") == ("HELLO\n", "bye\n")
    assert (tmp_path / "a.txt").read_text() == "bye\n"
    assert [e.path for e in await backend.ls("")] == ["a.txt"]
    assert backend.workspace_path(str(tmp_path / "a.txt")) == "a.txt"
    assert backend.shell is None
