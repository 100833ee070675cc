"""The filesystem and shell tools, built over a backend.

Tool names and argument names are a stable interface (scripts and other tools depend on
them); optional arguments may be added, none renamed. Paths the model sees are relative
to the workspace root; absolute paths inside the workspace are accepted too.

Faults the model can fix come back as error tool results. Edits carry an artifact with
the whole file before and after, which the editor faces turn into diffs.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.protocol import Backend, GrepQuery, Shell, ShellCommand
from deepacp.backends.sandbox import failure_hint
from deepacp.events import ToolOutput, ToolTerminal
from deepacp.harness.contracts import EditArtifact, NoticeSignal
from deepacp.harness.names import DELETE, EDIT_FILE, EXECUTE, GLOB, GREP, LS, READ_FILE, WRITE_FILE
from deepacp.secrets import clip

DEFAULT_READ_LIMIT = 100
MAX_LINE_CHARS = 2000
MAX_RESULTS = 1000


def numbered(lines: list[str], first: int) -> str:
    """`cat -n` style lines, starting at line number `first`."""
    out = []
    for number, line in enumerate(lines, start=first):
        if len(line) > MAX_LINE_CHARS:
            line = clip(line, MAX_LINE_CHARS) + " … [line clipped]"  # no half a key left
        out.append(f"{number:>6}\t{line}")
    return "\n".join(out)


def truncated(what: str) -> str:
    """The line that ends a listing cut at `MAX_RESULTS`, saying how to see the rest."""
    return f"… results truncated at {MAX_RESULTS}; narrow the {what}"


def edit_artifact(backend: Backend, path: str, before: str | None, after: str | None) -> dict:
    """What the editor faces need to show a whole-file diff for a change (as JSON)."""
    disk = backend.disk_path(path)
    artifact = EditArtifact(
        backend.workspace_path(path), str(disk) if disk else None, before, after
    )
    return artifact.as_json()


def _snippet(text: str, needle: str, context: int = 3) -> str:
    """A few numbered lines around the first occurrence of `needle` in `text`."""
    index = text.find(needle) if needle else -1
    if index == -1:
        return ""
    lines = text.splitlines()
    first = text.count("\n", 0, index)
    last = first + needle.count("\n")
    start = max(0, first - context)
    return numbered(lines[start : last + context + 1], start + 1)


async def _read_or_none(backend: Backend, path: str) -> str | None:
    try:
        return await backend.read_text(path)
    except NotFoundError:
        return None


def _tool(func: Any, name: str, artifact: bool = False) -> BaseTool:
    """A StructuredTool from `func`, whose BackendErrors (and any OS error a backend did not
    translate, such as a name too long) become error results."""

    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return await func(*args, **kwargs)
        except BackendError as exc:
            raise ToolException(str(exc)) from None
        except OSError as exc:
            raise ToolException(f"{name} failed: {exc.strerror or exc}") from None

    return StructuredTool.from_function(
        coroutine=run,
        name=name,
        parse_docstring=True,
        handle_tool_error=True,
        response_format="content_and_artifact" if artifact else "content",
    )


def filesystem_tools(backend: Backend) -> list[BaseTool]:
    """ls, read_file, write_file, edit_file, delete, glob, grep — and execute with a shell."""

    async def ls(path: str = "") -> str:
        """List a directory of the workspace.

        Args:
            path: Directory to list ("" for the workspace root).
        """
        entries = await backend.ls(path)
        if not entries:
            return f"{path or '.'} is empty"
        lines = [e.path + ("/" if e.is_dir else "") for e in entries[:MAX_RESULTS]]
        if len(entries) > MAX_RESULTS:
            lines.append(truncated("path: list a subfolder, or glob for the names you need"))
        return "\n".join(lines)

    async def read_file(file_path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> str:
        """Read a text file, with line numbers.

        Args:
            file_path: File to read.
            offset: Lines to skip.
            limit: Most lines to return.
        """
        if offset < 0 or limit < 1:
            raise BackendError("offset must be >= 0 and limit >= 1")
        text = await backend.read_text(file_path)
        lines = text.splitlines()
        if not lines:
            return f"{backend.workspace_path(file_path)} is empty"
        if offset >= len(lines):
            raise BackendError(f"offset {offset} is past the end ({len(lines)} lines)")
        window = lines[offset : offset + limit]
        body = numbered(window, offset + 1)
        end = offset + len(window)
        if end < len(lines):
            body += (
                f"\n… showing lines {offset + 1}-{end} of {len(lines)}; "
                f"call read_file with offset={end} to read on"
            )
        return body

    async def write_file(file_path: str, content: str) -> tuple[str, dict]:
        """Create a file, or replace a file's whole content.

        Args:
            file_path: File to write.
            content: The file's whole new content.
        """
        before = await _read_or_none(backend, file_path)
        await backend.write_text(file_path, content)
        relative = backend.workspace_path(file_path)
        verb = "Created" if before is None else "Rewrote"
        message = f"{verb} {relative} ({len(content.splitlines())} lines)"
        return message, edit_artifact(backend, file_path, before, content)

    async def edit_file(
        file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> tuple[str, dict]:
        """Replace text in a file: old_string must match the file exactly (indentation
        included) and occur once, unless replace_all is true.

        Args:
            file_path: File to edit.
            old_string: The text to replace.
            new_string: Its replacement.
            replace_all: Replace every occurrence.
        """
        before, after = await backend.edit(
            file_path, old_string, new_string, replace_all=replace_all
        )
        relative = backend.workspace_path(file_path)
        count = before.count(old_string) if replace_all else 1
        message = f"Edited {relative}: replaced {count} occurrence{'s' * (count != 1)}."
        if snippet := _snippet(after, new_string):
            message += f"\n{snippet}"
        return message, edit_artifact(backend, file_path, before, after)

    async def delete(file_path: str) -> tuple[str, dict]:
        """Delete a file (or an empty directory).

        Args:
            file_path: File to delete.
        """
        try:
            before = await _read_or_none(backend, file_path)
        except BackendError:
            before = None  # a binary file or a directory: no text to show
        await backend.delete(file_path)
        relative = backend.workspace_path(file_path)
        return f"Deleted {relative}", edit_artifact(backend, file_path, before, None)

    async def glob(pattern: str, path: str = "") -> str:
        """Find files by glob pattern; skips files .gitignore ignores.

        Args:
            pattern: Glob pattern, relative to path; ** matches any directories.
            path: Directory to search in.
        """
        found = await backend.glob(pattern, path, limit=MAX_RESULTS + 1)
        if not found:
            return f"No files match {pattern!r}"
        text = "\n".join(found[:MAX_RESULTS])
        if len(found) > MAX_RESULTS:
            text += "\n" + truncated("pattern or path")
        return text

    async def grep(
        pattern: str,
        path: str = "",
        glob: str | None = None,
        regex: bool = False,
        ignore_case: bool = False,
    ) -> str:
        """Search file contents; prints matching lines as path:line: text. Skips files
        .gitignore ignores.

        Args:
            pattern: Text to look for (literal unless regex is true).
            path: File or directory to search.
            glob: Only files matching this glob.
            regex: pattern is a regular expression.
            ignore_case: Ignore case.
        """
        limit = MAX_RESULTS + 1  # one more than shown: tells whether there were more
        query = GrepQuery(pattern, path, glob, regex=regex, ignore_case=ignore_case, limit=limit)
        try:
            found = await backend.grep(query)
        except re.error as exc:
            raise BackendError(f"invalid regular expression: {exc}") from None
        if not found:
            return f"No matches for {pattern!r}"
        text = "\n".join(f"{m.path}:{m.line}: {m.text}" for m in found[:MAX_RESULTS])
        if len(found) > MAX_RESULTS:
            text += "\n" + truncated("pattern, path or glob")
        return text

    tools = [
        _tool(ls, LS),
        _tool(read_file, READ_FILE),
        _tool(write_file, WRITE_FILE, artifact=True),
        _tool(edit_file, EDIT_FILE, artifact=True),
        _tool(delete, DELETE, artifact=True),
        _tool(glob, GLOB),
        _tool(grep, GREP),
    ]
    if (shell := backend.shell) is not None:
        tools.append(execute_tool(shell))
    return tools


def execute_tool(shell: Shell) -> BaseTool:
    async def execute(
        command: str,
        runtime: ToolRuntime,
        timeout: float | None = None,
        outside_sandbox: bool = False,
    ) -> Any:
        """Run a shell command in the workspace root; returns its output, exit code and
        sandbox policy (`off`: none). In a sandbox only the workspace is writable,
        credentials are hidden and the network is off unless the policy allows it.

        Args:
            command: The shell command line.
            timeout: Seconds before the command is killed (default 120).
            outside_sandbox: Only when the sandbox stopped it: run it outside (the user is
                asked first).
        """
        call_id = runtime.tool_call_id or ""  # always set when the agent calls the tool

        def forward(text: str) -> None:
            runtime.stream_writer(ToolOutput(call_id, text))

        def show_terminal(terminal_id: str) -> None:
            runtime.stream_writer(ToolTerminal(call_id, terminal_id))

        run = ShellCommand(command, timeout, forward, show_terminal, outside_sandbox)
        result = await shell.execute(run)
        if result.notice is not None:
            runtime.stream_writer(NoticeSignal(result.notice))
        lines = [output] if (output := result.output.rstrip("\n")) else []
        if result.exit_code != 0 and (hint := failure_hint(output, result.sandbox or "off")):
            lines.append(hint)
        policy = "" if result.sandbox is None else f" [sandbox: {result.sandbox}]"
        if result.timed_out:
            lines.append(f"[timed out; the command was killed]{policy}")
            raise ToolException("\n".join(lines))
        text = "\n".join([*lines, f"[exit code {result.exit_code}]{policy}"])
        if result.exit_code != 0:
            raise ToolException(text)
        return text

    return _tool(execute, EXECUTE)
