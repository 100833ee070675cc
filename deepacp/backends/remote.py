"""RemoteBackend: a workspace on another machine. Every file operation is one small program
(`remote_script`) run there through a `Runner` (ssh, docker exec), and commands run there
through the same runner: one primitive makes any machine a full backend.

Paths are checked here as for every backend (`deepacp.backends.paths`) and resolved there
with realpath, so `..` and links that leave the remote root are refused where the links
are. Edits are `BaseBackend`'s (read, `replace_exact`, write); glob and grep take the same
queries, filters and limits as on disk. Paths and contents travel as JSON on the program's
stdin, never on a command line; a command the agent runs is one argument of `sh -c`.
Commands run unsandboxed there: what guards them is the approvals.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import functools
import json
import subprocess
from pathlib import Path
from typing import Any

from deepacp.backends.base import BaseBackend
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.filesystem import MAX_LS_ENTRIES, decode_text, glob_pattern
from deepacp.backends.paths import to_workspace_path
from deepacp.backends.protocol import MAX_TEXT_BYTES, Entry, ExecuteResult, ShellCommand
from deepacp.backends.pysearch import (
    GrepMatch,
    GrepQuery,
    clip_line,
    not_ignored,
    path_order,
    relative_to,
)
from deepacp.backends.runners import RemoteTarget, Runner, last_line, runner_for
from deepacp.backends.search import REGEX_DEADLINE, compile_glob, filter_matches
from deepacp.backends.shell import (
    DEFAULT_MAX_OUTPUT,
    DEFAULT_TIMEOUT,
    checked_timeout,
    command_environment,
    run_streamed,
)
from deepacp.backends.slots import CommandSlots
from deepacp.errors import RemoteUnavailable

OPERATION_TIMEOUT = 60.0
"""Seconds one file operation may take there."""
MAX_FILES = 200_000
"""Files a glob or grep looks at, at most."""
PARALLEL = 4
"""File operations, and commands, at once over one runner (ssh allows 10 sessions on a
connection by default: both together stay under it)."""
BACKGROUND_COMMANDS = 2
"""Of the commands at once, background tasks' at most (the turn's own keep the rest)."""

EXECUTE = """cd -- "$1" || exit 126
exec 3<&0
(read _ <&3; kill -KILL 0) >/dev/null 2>&1 &
exec sh -c "$2" </dev/null 2>&1 3<&-"""
"""Runs "$2" in the root "$1", and kills what is left of it when the connection goes (the
watchdog reads the connection's stdin, which ends when the local runner is killed)."""


@functools.cache
def remote_program() -> str:
    return (Path(__file__).parent / "remote_script.py").read_text(encoding="utf-8")


class RemoteShell:
    """Commands in the remote root, through the runner."""

    def __init__(self, runner: Runner, root: str) -> None:
        self.runner = runner
        self.root = root
        self.env = command_environment()
        self._slots = CommandSlots(PARALLEL, BACKGROUND_COMMANDS)

    async def execute(self, run: ShellCommand) -> ExecuteResult:
        timeout = checked_timeout(run, DEFAULT_TIMEOUT)
        argv = self.runner.argv(["sh", "-c", EXECUTE, "sh", self.root, run.command])
        async with self._slots.held():
            return await run_streamed(
                argv,
                cwd=Path("/"),
                env=self.env,
                timeout=timeout,
                on_output=run.on_output,
                max_output=DEFAULT_MAX_OUTPUT,
                hold_stdin=True,
            )


def _fault(kind: str, detail: str, relative: str) -> BackendError:
    """The model's message for what the remote program refused."""
    shown = relative or "."
    messages = {
        "outside": f"{shown} resolves outside the workspace (through a symlink)",
        "loop": f"{shown}: a symbolic link loop",
        "notdir": f"{shown} is a file, not a directory; use read_file",
        "isdir": f"{shown} is a directory; use ls to list it",
        "notreg": f"{shown} is not a regular file",
        "notempty": f"{shown} is a directory that is not empty",
        "badregex": f"invalid regular expression: {detail}",
    }
    if kind == "missing":
        return NotFoundError(f"{shown}: no such file or directory")
    if kind in ("outside", "loop"):
        return PathError(messages[kind])
    if kind == "toolarge":
        return BackendError(
            f"{shown} is {int(detail) / 1e6:.1f} MB, too large to read whole; "
            "use grep to find the lines you need"
        )
    return BackendError(messages.get(kind, f"{shown}: {detail}"))


class RemoteBackend(BaseBackend):
    """Files under `root` on the runner's machine; nothing outside it is reachable."""

    def __init__(self, runner: Runner, root: str, *, given_root: str | None = None) -> None:
        """`root`: the checkout's real path there (`connect` finds it); `given_root`: the
        path as the user wrote it, also accepted in absolute paths."""
        self.runner = runner
        self.root = root
        self._roots = tuple(dict.fromkeys([root, given_root or root]))
        self._slots = asyncio.Semaphore(PARALLEL)
        self._shell = RemoteShell(runner, root)

    @classmethod
    async def connect(cls, target: RemoteTarget, runner: Runner | None = None) -> RemoteBackend:
        """The workspace `target` names, once its machine answers and the path is a folder
        there (`RemoteUnavailable` says what is wrong)."""
        runner = runner or runner_for(target)
        await runner.connect()
        try:
            real = await _call(runner, {"op": "probe", "root": target.root}, OPERATION_TIMEOUT)
        except BackendError as exc:
            raise RemoteUnavailable(f"{target}: {exc}") from None
        except _Refused as refused:
            what = "does not exist" if refused.kind == "missing" else "is not a folder"
            raise RemoteUnavailable(f"{target}: {target.root} {what} there") from None
        return cls(runner, str(real["root"]), given_root=target.root)

    @property
    def shell(self) -> RemoteShell:
        return self._shell

    def workspace_path(self, path: str) -> str:
        return to_workspace_path(path, *self._roots)

    def resolved_path(self, path: str) -> str:
        """Where `path`'s links lead, asked of the remote machine. Synchronous, as the
        approval checks that call it are: it blocks for one round trip."""
        relative = self.workspace_path(path)
        request = json.dumps({"op": "resolve", "root": self.root, "path": relative})
        try:
            done = subprocess.run(
                self.runner.argv(_python()),
                input=request.encode(),
                capture_output=True,
                timeout=OPERATION_TIMEOUT,
            )
            answer = json.loads(done.stdout or b"{}")
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return relative  # unreachable: every operation on it fails there anyway
        if "error" in answer:
            raise _fault(answer["error"], answer.get("detail", ""), relative)
        return str(answer.get("ok", relative))

    async def _op(self, op: str, relative: str, timeout: float = OPERATION_TIMEOUT, **args: Any):
        request = {"op": op, "root": self.root, "path": relative, **args}
        async with self._slots:
            try:
                return await _call(self.runner, request, timeout)
            except _Refused as refused:
                raise _fault(refused.kind, refused.detail, relative) from None

    async def ls(self, path: str = "") -> list[Entry]:
        relative = self.workspace_path(path)
        entries = await self._op("ls", relative, limit=MAX_LS_ENTRIES)
        prefix = f"{relative}/" if relative else ""
        return [Entry(prefix + name, is_dir, size) for name, is_dir, size in entries]

    async def read_text(self, path: str) -> str:
        relative = self.workspace_path(path)
        data = await self._op("read", relative, limit=MAX_TEXT_BYTES)
        return decode_text(base64.b64decode(data), relative)

    async def write_text(self, path: str, content: str) -> None:
        relative = self.workspace_path(path)
        if not relative:
            raise BackendError("cannot write to the workspace root itself; give a file path")
        data = content.encode("utf-8")
        if len(data) > MAX_TEXT_BYTES:
            raise BackendError(f"content for {relative} is larger than {MAX_TEXT_BYTES} bytes")
        await self._op("write", relative, data=base64.b64encode(data).decode("ascii"))

    async def delete(self, path: str) -> None:
        relative = self.workspace_path(path)
        if not relative:
            raise BackendError("refusing to delete the workspace root")
        await self._op("delete", relative)

    async def _files(self, start: str) -> list[str]:
        listed = await self._op("files", start, limit=MAX_FILES)
        return sorted(not_ignored(listed["files"], listed["ignores"]), key=path_order)

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        start = self.workspace_path(path)
        pattern = glob_pattern(pattern, self)
        files = await self._files(start)
        matcher = compile_glob(pattern)
        prefix = f"{start}/" if start else ""
        return [f for f in files if matcher.match(f.removeprefix(prefix))][:limit]

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        start = self.workspace_path(query.path)
        files = await self._files(start)
        if query.glob:
            files = [f for f in files if filter_matches(query.glob, relative_to(f, start))]
        try:
            found = await self._op(
                "grep",
                start,
                REGEX_DEADLINE,
                files=files,
                pattern=query.pattern,
                regex=query.regex,
                ignore_case=query.ignore_case,
                limit=query.limit,
            )
        except _TimedOut:
            raise BackendError(
                f"the search took too long (over {REGEX_DEADLINE:.0f} s) and was stopped; "
                "if the pattern is a regular expression it probably backtracks: use a "
                "simpler pattern, or a path or glob that searches fewer files"
            ) from None
        return [GrepMatch(p, n, clip_line(t)) for p, n, t in found]

    async def close(self) -> None:
        await self.runner.close()


def _python() -> list[str]:
    """The remote program's command line: no path or data in it (they go on stdin)."""
    return ["python3", "-I", "-c", remote_program()]


@dataclasses.dataclass
class _Refused(Exception):
    kind: str
    detail: str


class _TimedOut(BackendError):
    pass


async def _call(runner: Runner, request: dict[str, Any], timeout: float) -> Any:
    """Run one operation there: its answer, `_Refused` for a fault it reports, or
    `BackendError` when the machine does not answer."""
    proc = await asyncio.create_subprocess_exec(
        *runner.argv(_python()),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(json.dumps(request).encode()), timeout)
    except TimeoutError:
        raise _TimedOut(f"the remote workspace took over {timeout:.0f} s to answer") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
    try:
        answer = json.loads(out)
    except ValueError:
        said = err.decode("utf-8", "replace")
        if proc.returncode == 127 or "python3: not found" in said:
            said = "python3 is not installed there (remote workspaces need it)"
        raise BackendError(
            f"the remote workspace {runner.target} did not answer: {last_line(said)}"
        ) from None
    if "error" in answer:
        raise _Refused(answer["error"], answer.get("detail") or "")
    return answer["ok"]
