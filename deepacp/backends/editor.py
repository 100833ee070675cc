"""EditorBackend: work through the editor instead of behind its back.

Reads go to the editor (so the agent sees unsaved buffers), writes go to the editor (so it
records the change and offers its own review), commands run in the editor's terminal (so
the output shows live) — each only when the editor offers it; otherwise the disk backend
underneath does the work. Paths are confined by that disk backend before the editor is
asked anything. The editor is reached through the small `EditorClient` protocol
(`editor_client.py`), which a face (the ACP server) implements.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from deepacp.backends.base import DelegatingBackend
from deepacp.backends.editor_client import EditorClient, EditorError
from deepacp.backends.editor_review import EditorReview
from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.protocol import MAX_TEXT_BYTES, ExecuteResult, Shell, ShellCommand
from deepacp.backends.sandbox import Sandbox
from deepacp.backends.sandbox_launch import launched
from deepacp.backends.shell import (
    DEFAULT_MAX_OUTPUT,
    DEFAULT_TIMEOUT,
    LocalShell,
    checked_timeout,
    command_guard,
    command_policy,
    guarded_run,
    shell_argv,
)


class EditorBackend(DelegatingBackend[FilesystemBackend]):
    """A disk backend whose reads, writes and commands go through the editor when it can;
    `review` (when given) remembers each write, to tell the model what the user did to it."""

    def __init__(
        self, disk: FilesystemBackend, editor: EditorClient, review: EditorReview | None = None
    ) -> None:
        super().__init__(disk)
        self.editor = editor
        self.review = review

    @property
    def shell(self) -> Shell | None:
        inner = self.inner.shell
        if self.editor.can_run:  # in the sandbox the disk's own shell would use
            sandbox = inner.sandbox if isinstance(inner, LocalShell) else None
            return EditorTerminal(self.editor, self.inner.root, sandbox)
        return inner

    def _editor_path(self, path: str) -> str:
        """The absolute path to give the editor, after confinement; missing files raise."""
        real = self.inner.confined_path(path)
        if real.is_dir():
            raise BackendError(
                f"{self.workspace_path(path) or '.'} is a directory; use ls to list it"
            )
        return str(self.inner.disk_path(path))

    async def read_text(self, path: str) -> str:
        if not self.editor.can_read:
            return await self.inner.read_text(path)
        target = self._editor_path(path)
        if not Path(target).exists():
            raise NotFoundError(f"{self.workspace_path(path)}: no such file or directory")
        await self.inner.read_text(path)  # the same checks as on disk: binary, too large
        try:
            return await self.editor.read_text_file(target)
        except EditorError as exc:
            raise BackendError(
                f"the editor could not read {self.workspace_path(path)}: {exc}"
            ) from None

    async def write_text(self, path: str, content: str) -> None:
        if not self.editor.can_write:
            return await self.inner.write_text(path, content)
        target = self._editor_path(path)
        if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            raise BackendError(
                f"content for {self.workspace_path(path)} is larger than {MAX_TEXT_BYTES} bytes"
            )
        before = await self._before_write(target)
        try:
            await self.editor.write_text_file(target, content)
        except EditorError as exc:
            raise BackendError(
                f"the editor could not write {self.workspace_path(path)}: {exc}"
            ) from None
        if self.review is not None:
            self.review.wrote(target, self.workspace_path(path), before, content)

    async def _before_write(self, target: str) -> str | None:
        """The text a write replaces, for the review (None: a new file, or not needed)."""
        if self.review is None or self.review.tracks(target) or not Path(target).is_file():
            return None
        try:
            if self.editor.can_read:
                return await self.editor.read_text_file(target)
            return Path(target).read_text(encoding="utf-8")
        except (EditorError, OSError, UnicodeDecodeError):
            return None

    async def delete(self, path: str) -> None:
        await self.inner.delete(path)
        if self.review is not None:
            self.review.forget(str(self.inner.disk_path(path)))


class EditorTerminal:
    """Commands in the editor's terminals (`terminal/*`), in the workspace root `root`,
    wrapped in `sandbox` when there is one (the card still shows the command itself)."""

    def __init__(self, editor: EditorClient, root: Path, sandbox: Sandbox | None = None) -> None:
        self.editor = editor
        self.root = root
        self.sandbox = sandbox

    async def execute(self, run: ShellCommand) -> ExecuteResult:
        timeout = checked_timeout(run, DEFAULT_TIMEOUT)
        policy = command_policy(self.sandbox, run)
        guard = await asyncio.to_thread(command_guard, self.sandbox, policy)
        argv = shell_argv(run.command)
        held: Path | None = None
        if self.sandbox is not None and policy not in (None, "off"):
            wrapped = self.sandbox.wrap(argv, policy, guard)
            argv, held = launched(wrapped, argv)  # the editor shows the command, not bwrap's
        try:
            return await guarded_run(self._run(argv, timeout, run), policy, guard, self.root)
        finally:
            if held is not None:
                held.unlink(missing_ok=True)

    async def _run(self, argv: list[str], timeout: float, run: ShellCommand) -> ExecuteResult:
        try:
            terminal = await self.editor.create_terminal(argv, str(self.root), DEFAULT_MAX_OUTPUT)
        except EditorError as exc:
            raise BackendError(f"the editor could not start the command: {exc}") from None
        if run.on_terminal is not None:
            run.on_terminal(terminal)
        try:
            await asyncio.wait_for(self.editor.wait_for_exit(terminal), timeout)
            status = await self.editor.terminal_status(terminal)
            timed_out = False
        except TimeoutError:
            await self.editor.kill_terminal(terminal)
            status = await self.editor.terminal_status(terminal)
            timed_out = True
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._stop(terminal))
            raise
        await self._release(terminal)
        return ExecuteResult(
            output=status.output,
            exit_code=None if timed_out else status.exit_code,
            truncated=status.truncated,
            timed_out=timed_out,
        )

    async def _stop(self, terminal: str) -> None:
        await self.editor.kill_terminal(terminal)
        await self._release(terminal)

    async def _release(self, terminal: str) -> None:
        with contextlib.suppress(EditorError):
            await self.editor.release_terminal(terminal)
