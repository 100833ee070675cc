"""The backend seam: where the agent's files live and whether it has a shell.

Every method takes a path as the model wrote it (workspace-relative, or absolute inside
the workspace) and returns workspace paths. Faults the model can fix — a missing file, a
path outside the workspace, an ambiguous edit — raise `BackendError` with a message
written for the model; the tool layer turns it into an error result.

How the pieces fit, so that a wrapper states only what it changes:
- `Backend` is a Protocol: what callers (tools, middleware, the session) may use; a fake
  in a test need only have its members. Implementations subclass `BaseBackend`
  (`deepacp.backends.base`), the one place for what they share: `edit` as read, exact
  replace (`replace_exact`), write — through the backend's own reads and writes, so a
  backend that changes those changes edits with them — and no shell.
- A wrapper (permissions, the editor, the overlay) subclasses `DelegatingBackend`:
  everything it does not override goes to `inner`, its shell included.
- The shell is a capability object, not a flag: `backend.shell` is a `Shell` or None, and
  the execute tool is offered exactly when it is not None. A wrapper that leaves commands
  alone passes its inner backend's shell on by inheriting; one that changes them returns
  its own `Shell` around it (the permission policy) or instead of it (the editor's
  terminal). Not a `ShellBackend` subtype: whether a wrapper has a shell follows from what
  it wraps, which a class fixed per type could only say with two classes per wrapper.
- grep takes one `GrepQuery` and a shell one `ShellCommand`: each layer passes the
  request on, replacing only the field it changes (a routed path, a raised limit).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from deepacp.backends.errors import BackendError, PathError
from deepacp.backends.sandbox import SandboxPolicy
from deepacp.backends.search import GrepMatch, GrepQuery

MAX_TEXT_BYTES = 10 * 1024 * 1024
"""Files larger than this are not read or edited whole (grep them instead)."""

__all__ = [
    "MAX_TEXT_BYTES",
    "Backend",
    "BackendError",
    "Entry",
    "ExecuteResult",
    "GrepMatch",
    "GrepQuery",
    "OutputCallback",
    "PathError",
    "Shell",
    "ShellCommand",
    "TerminalCallback",
    "replace_exact",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One name in a directory listing (`size` None for folders)."""

    path: str
    is_dir: bool
    size: int | None = None


OutputCallback = Callable[[str], Awaitable[None] | None]
TerminalCallback = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """A command to run in the workspace root, and who is told about it as it runs."""

    command: str
    timeout: float | None = None
    """Seconds before it is killed; None: the shell's default."""
    on_output: OutputCallback | None = None
    """Told each piece of output as it comes."""
    on_terminal: TerminalCallback | None = None
    """Told the id of the editor terminal it runs in (so its card can show it live)."""
    outside_sandbox: bool = False
    """Run it outside the session's sandbox (the user approved exactly that)."""


@dataclass(frozen=True, slots=True)
class ExecuteResult:
    """How a command ended."""

    output: str
    """What it printed (stdout and stderr together); its middle is cut when too long."""
    exit_code: int | None
    """None when it was killed."""
    truncated: bool = False
    """Whether output was cut."""
    timed_out: bool = False
    sandbox: SandboxPolicy | None = None
    """The sandbox policy it ran under (`off`: unsandboxed); None: the shell has none."""
    notice: str | None = None
    """What the user must be told beside the result: the sandbox's guard could not undo
    what the command left (see `deepacp.backends.guard`)."""


class Shell(Protocol):
    """Where a workspace's commands run."""

    async def execute(self, run: ShellCommand) -> ExecuteResult: ...


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
    lines: list[int] = []
    start = 0
    while len(lines) < limit and (index := text.find(needle, start)) != -1:
        lines.append(text.count("\n", 0, index) + 1)
        start = index + 1
    return lines


class Backend(Protocol):
    """Files in a workspace, and maybe a shell (see the module docstring)."""

    @property
    def shell(self) -> Shell | None:
        """Where commands run; None: this workspace has no shell."""
        ...

    async def ls(self, path: str = "") -> list[Entry]: ...

    async def read_text(self, path: str) -> str:
        """The whole text of a file (UTF-8), or `BackendError`."""
        ...

    async def write_text(self, path: str, content: str) -> None:
        """Create or overwrite a file, creating parent directories."""
        ...

    async def edit(
        self, path: str, old: str, new: str, *, replace_all: bool = False
    ) -> tuple[str, str]:
        """Exact string replacement (`replace_exact`); returns (text before, text after)."""
        ...

    async def delete(self, path: str) -> None: ...

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]: ...

    async def grep(self, query: GrepQuery) -> list[GrepMatch]: ...

    def workspace_path(self, path: str) -> str:
        """The canonical workspace path for `path` (raises `PathError`)."""
        ...

    def disk_path(self, path: str) -> Path | None:
        """The absolute path on disk, or None for files that live elsewhere (state, store)."""
        ...

    def resolved_path(self, path: str) -> str:
        """The workspace path `path` leads to once symbolic links are followed (raises
        `PathError`); the same as `workspace_path` where there are no links."""
        ...
