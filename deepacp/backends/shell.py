"""The local shell: `LocalShell` runs commands on this machine, in the session's sandbox
(`deepacp.backends.sandbox`) when it has one, and `LocalShellBackend` is the workspace on
disk with one."""

from __future__ import annotations

import asyncio
import codecs
import dataclasses
import inspect
import os
import signal
from collections.abc import Awaitable, Sequence
from pathlib import Path

from deepacp.backends.errors import BackendError
from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.guard import Guard
from deepacp.backends.protocol import ExecuteResult, OutputCallback, ShellCommand
from deepacp.backends.sandbox import Sandbox, SandboxPolicy, SandboxSetting
from deepacp.backends.slots import CommandSlots
from deepacp.secrets import redact, secrets_in

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 3600.0
DEFAULT_MAX_OUTPUT = 1_000_000
MAX_PARALLEL_COMMANDS = 8
"""Commands running at once; more (a model message with 1,000 calls) wait their turn."""
MAX_BACKGROUND_COMMANDS = 4
"""Of those, background tasks' at most: the rest stay free for the turn's own commands."""

KEEP_ENV = "DEEPACP_KEEP_ENV"
"""Comma-separated names of secret variables that commands may have all the same."""

_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1"}


def command_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for agent commands: ours, minus every secret (`deepacp.secrets`'s
    definition) and deepacp's own settings, with pagers off. `DEEPACP_KEEP_ENV` names
    secrets to pass through anyway (their values are still redacted from output)."""
    source = base if base is not None else os.environ
    keep = {n.strip() for n in source.get(KEEP_ENV, "").split(",") if n.strip()}
    env = {
        name: value
        for name, value in source.items()
        if name in keep or not (name.upper().startswith("DEEPACP_") or secrets_in(name, value))
    }
    env.update(_QUIET_ENV)
    return env


class _Capture:
    """Keeps the head and tail of a command's output within a character budget.

    Each end keeps `SLACK` characters more than it shows and is redacted before it is cut
    to size, so a cut through a secret leaves no prefix of it behind."""

    SLACK = 4096

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.head = ""
        self.tail = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        room = self.half + self.SLACK - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail += text
            if len(self.tail) > self.half + self.SLACK:
                self.dropped += len(self.tail) - self.half - self.SLACK
                self.tail = self.tail[-self.half - self.SLACK :]

    def text(self) -> str:
        if not self.dropped:  # head and tail meet: one text
            whole = redact(self.head + self.tail)
            if len(whole) <= 2 * self.half:
                return whole
            head, tail, omitted = whole, whole, len(whole) - 2 * self.half
        else:
            head, tail = redact(self.head), redact(self.tail)
            omitted = self.dropped + len(head) + len(tail) - 2 * self.half
        middle = f"\n… [{omitted} characters of output omitted] …\n"
        return head[: self.half] + middle + tail[-self.half :]

    @property
    def truncated(self) -> bool:
        return self.dropped > 0 or len(self.head) + len(self.tail) > 2 * self.half


_lifeline: tuple[int, int, int] | None = None  # (our pid, read end, write end)


def lifeline() -> int:
    """The read end of a pipe whose write end only this process holds (it is never
    inherited): it reads end-of-file once the process is gone, however it ended — kill -9
    included. Each command's watchdog waits on it and then kills the command's group."""
    global _lifeline
    if _lifeline is None or _lifeline[0] != os.getpid():
        read, write = os.pipe()
        _lifeline = (os.getpid(), read, write)
    return _lifeline[1]


def shell_argv(command: str) -> list[str]:
    """argv running `command` as `sh -c` does."""
    return ["/bin/sh", "-c", command]


def watched(argv: Sequence[str], fd: int) -> list[str]:
    """`argv`, beside a watchdog in its process group that kills the whole group when the
    server's lifeline breaks. The watchdog is not a child of the command's shell, so `wait`
    in the command does not wait for it, and holds none of its output pipes, so the output
    ends when the command's does."""
    watchdog = f"(read _ < /dev/fd/{fd}; kill -KILL 0) </dev/null >/dev/null 2>&1 &"
    script = f'( {watchdog} ); exec "$@"'
    return ["/bin/sh", "-c", script, "sh", *argv]


def kill_group(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def checked_timeout(run: ShellCommand, default: float) -> float:
    """The seconds `run` may take (`default` when it does not say), or `BackendError` for an
    empty command or a timeout out of range: the checks every shell makes first."""
    if not run.command.strip():
        raise BackendError("command is empty")
    timeout = default if run.timeout is None else run.timeout
    if not 0 < timeout <= MAX_TIMEOUT:
        raise BackendError(f"timeout must be between 0 and {MAX_TIMEOUT:.0f} seconds")
    return timeout


class LocalShell:
    """Commands in `root`, on this machine.

    Each command runs in its own process group; on timeout or cancel the whole group is
    killed, and so it is when this process dies (see `lifeline`). At most
    `MAX_PARALLEL_COMMANDS` run at once, background tasks' taking at most
    `MAX_BACKGROUND_COMMANDS` of them. With a `sandbox` setting, commands run in the
    sandbox its policy describes (a command approved to run outside it excepted); without
    one they are not sandboxed, and approvals are what protects the user.
    """

    def __init__(
        self,
        root: Path,
        *,
        default_timeout: float = DEFAULT_TIMEOUT,
        max_output: int = DEFAULT_MAX_OUTPUT,
        env: dict[str, str] | None = None,
        sandbox: SandboxSetting | None = None,
        hidden: Sequence[Path] = (),
        extra_roots: Sequence[Path] = (),
    ) -> None:
        self.root = root
        self.default_timeout = default_timeout
        self.max_output = max_output
        self.env = command_environment(env)
        self.sandbox = None
        if sandbox is not None:
            self.sandbox = Sandbox(root, sandbox, tuple(hidden), tuple(extra_roots))
        self._slots = CommandSlots(MAX_PARALLEL_COMMANDS, MAX_BACKGROUND_COMMANDS)

    async def execute(self, run: ShellCommand) -> ExecuteResult:
        timeout = checked_timeout(run, self.default_timeout)
        policy = command_policy(self.sandbox, run)
        guard = await asyncio.to_thread(command_guard, self.sandbox, policy)
        argv = shell_argv(run.command)
        if self.sandbox is not None:
            argv = self.sandbox.wrap(argv, policy or "off", guard)
        running = self.run_argv(argv, timeout, run.on_output)
        return await guarded_run(running, policy, guard, self.root)

    async def run_argv(
        self, argv: list[str], timeout: float, on_output: OutputCallback | None
    ) -> ExecuteResult:
        """`argv` (already wrapped as it must run) in the root, when its turn among the
        running commands comes."""
        async with self._slots.held():
            return await self._run(argv, timeout, on_output)

    async def _run(
        self, argv: list[str], timeout: float, on_output: OutputCallback | None
    ) -> ExecuteResult:
        return await run_streamed(
            argv,
            cwd=self.root,
            env=self.env,
            timeout=timeout,
            on_output=on_output,
            max_output=self.max_output,
        )


async def run_streamed(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    on_output: OutputCallback | None,
    max_output: int,
    hold_stdin: bool = False,
) -> ExecuteResult:
    """Run `argv` in a process group of its own, telling `on_output` what it prints, and
    kill the whole group on timeout, on cancel, and when this process dies (`lifeline`).
    `hold_stdin`: its stdin is a pipe kept open until it ends (a remote runner's watchdog
    reads it), not /dev/null."""
    fd = lifeline()
    proc = await asyncio.create_subprocess_exec(
        *watched(argv, fd),
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if hold_stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        pass_fds=(fd,),
    )
    capture = _Capture(max_output)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def pump() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            text = decoder.decode(chunk)
            capture.add(text)
            if on_output is not None and text:
                result = on_output(text)
                if inspect.isawaitable(result):
                    await result
        capture.add(decoder.decode(b"", final=True))
        await proc.wait()

    timed_out = False
    try:
        await asyncio.wait_for(pump(), timeout)
    except TimeoutError:
        timed_out = True
    finally:
        # Kill the group on timeout or cancel, and reap background children too.
        kill_group(proc)
        if proc.stdin is not None:
            proc.stdin.close()
        if proc.returncode is None:
            try:
                await asyncio.shield(proc.wait())
            except asyncio.CancelledError:
                pass
    return ExecuteResult(
        output=capture.text(),
        exit_code=None if timed_out else proc.returncode,
        truncated=capture.truncated,
        timed_out=timed_out,
    )


def command_policy(sandbox: Sandbox | None, run: ShellCommand) -> SandboxPolicy | None:
    """The policy `run` runs under: None without a sandbox, `off` when it was approved to
    run outside the sandbox (or the sandbox cannot work here)."""
    if sandbox is None:
        return None
    return "off" if run.outside_sandbox else sandbox.setting.effective


def command_guard(sandbox: Sandbox | None, policy: SandboxPolicy | None) -> Guard | None:
    """The guarded paths of a command that runs under `policy` without asking."""
    return None if sandbox is None or policy is None else sandbox.guard(policy)


async def guarded_run(
    running: Awaitable[ExecuteResult],
    policy: SandboxPolicy | None,
    guard: Guard | None,
    root: Path,
) -> ExecuteResult:
    """The result of the command `running`, with its policy, once `guard` has undone what
    it left — a cancelled one too (said in its output, and to the user when something could
    not be undone)."""
    try:
        result = await running
    except asyncio.CancelledError:
        if guard is not None:
            await asyncio.shield(asyncio.to_thread(guard.settle))
        raise
    return await asyncio.to_thread(guarded_result, result, policy, guard, root)


def guarded_result(
    result: ExecuteResult, policy: SandboxPolicy | None, guard: Guard | None, root: Path
) -> ExecuteResult:
    """`result` with its policy, once `guard` has undone what the command left."""
    outcome = guard.settle() if guard is not None else None
    if outcome is None or outcome.clean:
        return dataclasses.replace(result, sandbox=policy)
    return dataclasses.replace(
        result,
        output=f"{result.output}\n{outcome.note(root)}",
        sandbox=policy,
        notice=outcome.notice("A command", root),
    )


class LocalShellBackend(FilesystemBackend):
    """FilesystemBackend plus a `LocalShell` in the workspace root; with a `sandbox`
    setting its commands are sandboxed, `hidden` (the backend's hidden folders) kept out
    of their sight too and `extra_roots` (more workspace folders) writable like the root."""

    def __init__(
        self,
        root_dir: str | Path,
        *,
        default_timeout: float = DEFAULT_TIMEOUT,
        max_output: int = DEFAULT_MAX_OUTPUT,
        env: dict[str, str] | None = None,
        use_ripgrep: bool | None = None,
        hidden: Sequence[Path] = (),
        sandbox: SandboxSetting | None = None,
        extra_roots: Sequence[Path] = (),
    ) -> None:
        super().__init__(root_dir, use_ripgrep=use_ripgrep, hidden=hidden)
        self._shell = LocalShell(
            self.root,
            default_timeout=default_timeout,
            max_output=max_output,
            env=env,
            sandbox=sandbox,
            hidden=hidden,
            extra_roots=extra_roots,
        )

    @property
    def shell(self) -> LocalShell:
        return self._shell
