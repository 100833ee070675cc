"""The backend seam: where the agent's files live and whether it has a shell.

Every method takes a path as the model wrote it (workspace-relative, or absolute inside
the workspace) and returns workspace paths. Faults the model can fix — a missing file, a
path outside the workspace, an ambiguous edit — raise `BackendError` with a message
written for the model; the tool layer turns it into an error result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from deepacp.backends.errors import BackendError, PathError
from deepacp.backends.search import GrepMatch

MAX_TEXT_BYTES = 10 * 1024 * 1024
"""Files larger than this are not read or edited whole (grep them instead)."""

__all__ = [
    "MAX_TEXT_BYTES",
    "Backend",
    "BackendError",
    "Entry",
    "ExecuteResult",
    "GrepMatch",
    "OutputCallback",
    "PathError",
    "TerminalCallback",
    "replace_exact",
]


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    is_dir: bool
    size: int | None = None


@dataclass(frozen=True, slots=True)
class ExecuteResult:
    output: str
    exit_code: int | None
    truncated: bool = False
    timed_out: bool = False


OutputCallback = Callable[[str], Awaitable[None] | None]
TerminalCallback = Callable[[str], None]
"""Told the id of the editor terminal a command runs in (so its card can show it live)."""


def replace_exact(
    text: str, old: str, new: str, *, replace_all: bool, path: str
) -> tuple[str, int]:
    """Replace `old` by `new` in `text`; `old` must occur exactly once unless `replace_all`."""
    if old == "":
        raise BackendError(
            "old_string is empty; to create or overwrite a whole file use write_file"
        )
    if old == new:
        raise BackendError("old_string and new_string are identical; nothing would change")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\r\n" not in old:
        # The model saw CRLF lines without their \r: match and write in the file's style.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        hint = ""
        if old.strip() and old.strip() in text:
            hint = " (it does occur with different leading/trailing whitespace)"
        raise BackendError(
            f"old_string was not found in {path}{hint}. Read the file again and copy the text "
            "exactly, including indentation."
        )
    if count > 1 and not replace_all:
        lines = _line_numbers(text, old)
        raise BackendError(
            f"old_string occurs {count} times in {path} (lines {', '.join(map(str, lines))}). "
            "Include more surrounding lines to make it unique, or pass replace_all=true."
        )
    return text.replace(old, new), count


def _line_numbers(text: str, needle: str, limit: int = 10) -> list[int]:
    lines, start = [], 0
    while len(lines) < limit and (index := text.find(needle, start)) != -1:
        lines.append(text.count("\n", 0, index) + 1)
        start = index + 1
    return lines


class Backend:
    """Base class of every backend: file operations, and `execute` when `can_execute`."""

    can_execute: bool = False

    async def ls(self, path: str = "") -> list[Entry]:
        raise NotImplementedError

    async def read_text(self, path: str) -> str:
        """The whole text of a file (UTF-8), or `BackendError`."""
        raise NotImplementedError

    async def write_text(self, path: str, content: str) -> None:
        """Create or overwrite a file, creating parent directories."""
        raise NotImplementedError

    async def delete(self, path: str) -> None:
        raise NotImplementedError

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        raise NotImplementedError

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
        raise NotImplementedError

    async def execute(
        self,
        command: str,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
        on_terminal: TerminalCallback | None = None,
    ) -> ExecuteResult:
        raise BackendError("this workspace has no shell")

    async def edit(
        self, path: str, old: str, new: str, *, replace_all: bool = False
    ) -> tuple[str, str]:
        """Exact string replacement; returns (text before, text after)."""
        before = await self.read_text(path)
        after, _ = replace_exact(before, old, new, replace_all=replace_all, path=path)
        await self.write_text(path, after)
        return before, after

    def workspace_path(self, path: str) -> str:
        """The canonical workspace path for `path` (raises `PathError`)."""
        raise NotImplementedError

    def disk_path(self, path: str) -> Path | None:
        """The absolute path on disk, or None for files that live elsewhere (state, store)."""
        return None

    def resolved_path(self, path: str) -> str:
        """The workspace path `path` leads to once symbolic links are followed (raises
        `PathError`); the same as `workspace_path` where there are no links."""
        return self.workspace_path(path)
