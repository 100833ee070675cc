"""EditorBackend: work through the editor instead of behind its back.

Reads go to the editor (so the agent sees unsaved buffers), writes go to the editor (so it
records the change and offers its own review), commands run in the editor's terminal (so
the output shows live) — each only when the editor offers it; otherwise the disk backend
underneath does the work. Paths are confined by that disk backend before the editor is
asked anything. The editor is reached through the small `EditorClient` protocol, which a
face (the ACP server) implements.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.protocol import (
    MAX_TEXT_BYTES,
    Backend,
    Entry,
    ExecuteResult,
    GrepMatch,
    OutputCallback,
    TerminalCallback,
)
from deepacp.backends.shell import DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT, MAX_TIMEOUT


class EditorError(Exception):
    """The editor refused or failed a request (the message says why)."""


@dataclass(frozen=True)
class TerminalStatus:
    output: str
    truncated: bool
    exit_code: int | None
    signal: str | None
    exited: bool


class EditorClient(Protocol):
    """What the editor offers. Methods raise `EditorError` when the editor says no."""

    can_read: bool
    can_write: bool
    can_run: bool

    async def read_text_file(self, path: str) -> str: ...

    async def write_text_file(self, path: str, content: str) -> None: ...

    async def create_terminal(self, command: str, cwd: str, output_limit: int) -> str: ...

    async def wait_for_exit(self, terminal_id: str) -> None: ...

    async def terminal_status(self, terminal_id: str) -> TerminalStatus: ...

    async def kill_terminal(self, terminal_id: str) -> None: ...

    async def release_terminal(self, terminal_id: str) -> None: ...


class EditorBackend(Backend):
    """A disk backend whose reads, writes and commands go through the editor when it can."""

    def __init__(self, disk: FilesystemBackend, editor: EditorClient) -> None:
        self.disk = disk
        self.editor = editor
        self.can_execute = disk.can_execute or editor.can_run

    def workspace_path(self, path: str) -> str:
        return self.disk.workspace_path(path)

    def disk_path(self, path: str) -> Path:
        return self.disk.disk_path(path)

    def resolved_path(self, path: str) -> str:
        return self.disk.resolved_path(path)

    def _editor_path(self, path: str) -> str:
        """The absolute path to give the editor, after confinement; missing files raise."""
        real = self.disk.confined_path(path)
        if real.is_dir():
            raise BackendError(
                f"{self.workspace_path(path) or '.'} is a directory; use ls to list it"
            )
        return str(self.disk_path(path))

    async def read_text(self, path: str) -> str:
        if not self.editor.can_read:
            return await self.disk.read_text(path)
        target = self._editor_path(path)
        if not Path(target).exists():
            raise NotFoundError(f"{self.workspace_path(path)}: no such file or directory")
        await self.disk.read_text(path)  # the same checks as on disk: binary, too large
        try:
            return await self.editor.read_text_file(target)
        except EditorError as exc:
            raise BackendError(
                f"the editor could not read {self.workspace_path(path)}: {exc}"
            ) from None

    async def write_text(self, path: str, content: str) -> None:
        if not self.editor.can_write:
            return await self.disk.write_text(path, content)
        target = self._editor_path(path)
        if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            raise BackendError(
                f"content for {self.workspace_path(path)} is larger than {MAX_TEXT_BYTES} bytes"
            )
        try:
            await self.editor.write_text_file(target, content)
        except EditorError as exc:
            raise BackendError(
                f"the editor could not write {self.workspace_path(path)}: {exc}"
            ) from None

    async def ls(self, path: str = "") -> list[Entry]:
        return await self.disk.ls(path)

    async def delete(self, path: str) -> None:
        await self.disk.delete(path)

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        return await self.disk.glob(pattern, path, limit=limit)

    async def grep(
        self,
        pattern: str,
        path: str = "",
        glob: str | None = None,
        *,
        regex: bool = False,
        ignore_case: bool = False,
        limit: int = 1000,
    ) -> list[GrepMatch]:
        return await self.disk.grep(
            pattern, path, glob, regex=regex, ignore_case=ignore_case, limit=limit
        )

    async def execute(
        self,
        command: str,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
        on_terminal: TerminalCallback | None = None,
    ) -> ExecuteResult:
        if not self.editor.can_run:
            return await self.disk.execute(command, timeout, on_output)
        if not command.strip():
            raise BackendError("command is empty")
        timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        if not 0 < timeout <= MAX_TIMEOUT:
            raise BackendError(f"timeout must be between 0 and {MAX_TIMEOUT:.0f} seconds")
        try:
            terminal = await self.editor.create_terminal(
                command, str(self.disk.root), DEFAULT_MAX_OUTPUT
            )
        except EditorError as exc:
            raise BackendError(f"the editor could not start the command: {exc}") from None
        if on_terminal is not None:
            on_terminal(terminal)
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
