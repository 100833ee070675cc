"""What a backend asks of the editor: its files and terminals, each when it offers them.

A face implements `EditorClient` over its protocol (the ACP server over `fs/*` and
`terminal/*`); `EditorBackend` and `EditorReview` use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


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

    async def create_terminal(self, argv: Sequence[str], cwd: str, output_limit: int) -> str:
        """Start `argv` (program, then its arguments) in a terminal; returns its id."""
        ...

    async def wait_for_exit(self, terminal_id: str) -> None: ...

    async def terminal_status(self, terminal_id: str) -> TerminalStatus: ...

    async def kill_terminal(self, terminal_id: str) -> None: ...

    async def release_terminal(self, terminal_id: str) -> None: ...
