"""EditorBackend: files and commands through the editor when it offers them, the disk
otherwise; paths confined before the editor is asked anything."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from deepacp.backends import (
    BackendError,
    EditorBackend,
    EditorClient,
    EditorError,
    FilesystemBackend,
    GrepQuery,
    LocalShellBackend,
    NotFoundError,
    PathError,
    ShellCommand,
    TerminalStatus,
)


class FakeEditor:
    """An editor with unsaved buffers and terminals whose commands the test finishes."""

    def __init__(self, *, read: bool = True, write: bool = True, run: bool = True) -> None:
        self.can_read, self.can_write, self.can_run = read, write, run
        self.buffers: dict[str, str] = {}
        self.requests: list[tuple[str, ...]] = []
        self.refuse: str | None = None
        self.exited: dict[str, asyncio.Event] = {}
        self.status = TerminalStatus("done\n", False, 0, None, True)

    def _ask(self, *request: str) -> None:
        self.requests.append(request)
        if self.refuse is not None:
            raise EditorError(self.refuse)

    async def read_text_file(self, path: str) -> str:
        self._ask("read", path)
        return self.buffers[path] if path in self.buffers else Path(path).read_text()

    async def write_text_file(self, path: str, content: str) -> None:
        self._ask("write", path)
        self.buffers[path] = content

    async def create_terminal(self, argv: Sequence[str], cwd: str, output_limit: int) -> str:
        self._ask("create", " ".join(argv), cwd, str(output_limit))
        terminal = f"term-{len(self.exited)}"
        self.exited[terminal] = asyncio.Event()
        return terminal

    async def wait_for_exit(self, terminal_id: str) -> None:
        await self.exited[terminal_id].wait()

    async def terminal_status(self, terminal_id: str) -> TerminalStatus:
        return self.status

    async def kill_terminal(self, terminal_id: str) -> None:
        self.requests.append(("kill", terminal_id))
        self.status = TerminalStatus("partial\n", False, None, "SIGKILL", True)
        self.exited[terminal_id].set()

    async def release_terminal(self, terminal_id: str) -> None:
        self.requests.append(("release", terminal_id))


def _satisfies_the_protocol(editor: FakeEditor) -> EditorClient:
    return editor  # the type checker holds the fake to EditorClient


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('disk')\n")
    (root / "data.bin").write_bytes(b"\0\1\2")
    (tmp_path / "outside.txt").write_text("outside\n")
    (root / "leak.txt").symlink_to(tmp_path / "outside.txt")
    return root


def editor_backend(root: Path, editor: FakeEditor, *, shell: bool = False) -> EditorBackend:
    disk = LocalShellBackend(root) if shell else FilesystemBackend(root)
    return EditorBackend(disk, _satisfies_the_protocol(editor))


async def test_reads_come_from_the_editors_buffer(workspace: Path) -> None:
    editor = FakeEditor()
    target = str(workspace / "src" / "app.py")
    editor.buffers[target] = "print('unsaved')\n"
    backend = editor_backend(workspace, editor)
    assert await backend.read_text("src/app.py") == "print('unsaved')\n"
    assert editor.requests == [("read", target)]


async def test_writes_go_to_the_editor_and_not_to_disk(workspace: Path) -> None:
    editor = FakeEditor()
    backend = editor_backend(workspace, editor)
    await backend.write_text("src/app.py", "print('new')\n")
    target = str(workspace / "src" / "app.py")
    assert editor.buffers[target] == "print('new')\n"
    assert (workspace / "src" / "app.py").read_text() == "print('disk')\n"


async def test_edits_read_and_write_through_the_editor(workspace: Path) -> None:
    editor = FakeEditor()
    target = str(workspace / "src" / "app.py")
    editor.buffers[target] = "print('unsaved')\n"
    backend = editor_backend(workspace, editor)
    assert await backend.edit("src/app.py", "unsaved", "edited") == (
        "print('unsaved')\n",
        "print('edited')\n",
    )
    assert editor.buffers[target] == "print('edited')\n"
    assert editor.requests == [("read", target), ("write", target)]


async def test_without_the_offer_the_disk_does_the_work(workspace: Path) -> None:
    editor = FakeEditor(read=False, write=False, run=False)
    backend = editor_backend(workspace, editor)
    await backend.write_text("src/app.py", "print('written')\n")
    assert await backend.read_text("src/app.py") == "print('written')\n"
    assert (workspace / "src" / "app.py").read_text() == "print('written')\n"
    assert backend.shell is None
    assert editor.requests == []


async def test_listing_searching_and_deleting_use_the_disk(workspace: Path) -> None:
    editor = FakeEditor()
    backend = editor_backend(workspace, editor)
    assert "src/app.py" in [e.path for e in await backend.ls("src")]
    assert await backend.glob("**/*.py") == ["src/app.py"]
    assert [m.path for m in await backend.grep(GrepQuery("disk"))] == ["src/app.py"]
    await backend.delete("src/app.py")
    assert not (workspace / "src" / "app.py").exists()
    assert editor.requests == []


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "leak.txt", "src/../.."])
async def test_paths_are_confined_before_the_editor_is_asked(workspace: Path, path: str) -> None:
    editor = FakeEditor()
    backend = editor_backend(workspace, editor)
    with pytest.raises(PathError):
        await backend.read_text(path)
    with pytest.raises(PathError):
        await backend.write_text(path, "pwned")
    assert editor.requests == []
    assert (workspace.parent / "outside.txt").read_text() == "outside\n"


async def test_what_the_disk_would_refuse_is_refused_before_asking(workspace: Path) -> None:
    editor = FakeEditor()
    backend = editor_backend(workspace, editor)
    with pytest.raises(NotFoundError):
        await backend.read_text("src/missing.py")
    with pytest.raises(BackendError, match="directory"):
        await backend.read_text("src")
    with pytest.raises(BackendError, match="directory"):
        await backend.write_text("src", "x")
    with pytest.raises(BackendError, match="binary"):
        await backend.read_text("data.bin")
    with pytest.raises(BackendError, match="larger than"):
        await backend.write_text("big.txt", "x" * (10 * 1024 * 1024 + 1))
    assert editor.requests == []


async def test_the_editors_refusals_become_backend_errors(workspace: Path) -> None:
    editor = FakeEditor()
    editor.refuse = "permission denied by the user"
    backend = editor_backend(workspace, editor)
    with pytest.raises(BackendError, match=r"the editor could not read src/app\.py: permission"):
        await backend.read_text("src/app.py")
    with pytest.raises(BackendError, match=r"the editor could not write src/app\.py: permission"):
        await backend.write_text("src/app.py", "x")
    shell = backend.shell
    assert shell is not None
    with pytest.raises(BackendError, match="the editor could not start the command"):
        await shell.execute(ShellCommand("ls"))


async def test_commands_run_in_the_editors_terminal(workspace: Path) -> None:
    editor = FakeEditor()
    backend = editor_backend(workspace, editor, shell=True)
    shell = backend.shell
    assert shell is not None
    shown: list[str] = []
    task = asyncio.create_task(shell.execute(ShellCommand("make test", on_terminal=shown.append)))
    while not editor.exited:
        await asyncio.sleep(0.01)
    editor.exited["term-0"].set()
    result = await task
    assert (result.output, result.exit_code, result.timed_out) == ("done\n", 0, False)
    assert shown == ["term-0"]
    assert editor.requests[0][:3] == ("create", "/bin/sh -c make test", str(workspace.resolve()))
    assert editor.requests[-1] == ("release", "term-0")


async def test_a_command_past_its_timeout_is_killed_and_released(workspace: Path) -> None:
    editor = FakeEditor()
    shell = editor_backend(workspace, editor).shell
    assert shell is not None
    result = await shell.execute(ShellCommand("sleep 100", timeout=0.2))
    assert result.timed_out and result.exit_code is None
    assert result.output == "partial\n"
    assert editor.requests[1:] == [("kill", "term-0"), ("release", "term-0")]


async def test_a_cancelled_command_is_killed_and_released(workspace: Path) -> None:
    editor = FakeEditor()
    shell = editor_backend(workspace, editor).shell
    assert shell is not None
    task = asyncio.create_task(shell.execute(ShellCommand("sleep 100")))
    while not editor.exited:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert editor.requests[1:] == [("kill", "term-0"), ("release", "term-0")]


@pytest.mark.parametrize(
    ("command", "timeout", "error"),
    [("  ", None, "command is empty"), ("ls", 0, "timeout"), ("ls", 99_999, "timeout")],
)
async def test_bad_commands_are_refused_before_a_terminal_opens(
    workspace: Path, command: str, timeout: float | None, error: str
) -> None:
    editor = FakeEditor()
    shell = editor_backend(workspace, editor).shell
    assert shell is not None
    with pytest.raises(BackendError, match=error):
        await shell.execute(ShellCommand(command, timeout))
    assert editor.requests == []


async def test_without_a_terminal_commands_run_in_the_disk_shell(workspace: Path) -> None:
    editor = FakeEditor(run=False)
    shell = editor_backend(workspace, editor, shell=True).shell
    assert shell is not None
    result = await shell.execute(ShellCommand("cat src/app.py"))
    assert (result.exit_code, result.output) == (0, "print('disk')\n")
    assert editor.requests == []
