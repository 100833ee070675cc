"""One hook's command run: its payload on stdin, in the session's sandbox, with the agent
commands' scrubbed environment, killed with its whole process group at its timeout; and
what its exit status and output decide."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from deepacp.backends.guard import Guard, GuardOutcome
from deepacp.backends.sandbox import Sandbox
from deepacp.backends.shell import command_environment, kill_group, lifeline, shell_argv, watched
from deepacp.secrets import redact

REPLY_BYTES = 64_000
"""What is read of a hook's stdout and of its stderr; the rest is discarded."""
DENY_EXIT = 2
"""The exit status that says no (the reason on stderr), as an alternative to JSON."""
REASON_CHARS = 2_000

Decision = Literal["none", "allow", "deny"]


@dataclass(frozen=True)
class HookRun:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    guarded: GuardOutcome | None = None
    """What the sandbox's guard undid after it, and what it could not (None: unguarded)."""


@dataclass(frozen=True)
class Verdict:
    """What one hook decided: nothing (`none`), `allow` or `deny`, why, and new tool args."""

    decision: Decision = "none"
    reason: str = ""
    args: dict[str, Any] | None = None
    problem: str | None = None
    """Why the hook failed (it then decided nothing): shown to the user, logged."""


async def run_hook(
    command: str, payload: bytes, *, cwd: Path, timeout: float, sandbox: Sandbox | None
) -> HookRun:
    """Run `command` as `sh -c` does, `payload` on its stdin, in `sandbox` when given, with
    the guard of a command that runs without asking."""
    argv = shell_argv(command)
    guard: Guard | None = None
    if sandbox is not None:
        policy = sandbox.setting.effective
        guard = await asyncio.to_thread(sandbox.guard, policy, hook=True)
        argv = sandbox.wrap(argv, policy, guard)
    fd = lifeline()
    proc = await asyncio.create_subprocess_exec(
        *watched(argv, fd),
        cwd=cwd,
        env=command_environment(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        pass_fds=(fd,),
    )

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(ConnectionError):  # a hook need not read its payload
            proc.stdin.write(payload)
            await proc.stdin.drain()
        proc.stdin.close()

    async def read(stream: asyncio.StreamReader | None) -> bytes:
        kept = b""
        while stream is not None and (chunk := await stream.read(65536)):
            kept += chunk[: max(0, REPLY_BYTES - len(kept))]
        return kept

    async def whole() -> tuple[bytes, bytes]:
        _, out, err = await asyncio.gather(feed(), read(proc.stdout), read(proc.stderr))
        await proc.wait()
        return out, err

    out, err, timed_out = b"", b"", False
    try:
        out, err = await asyncio.wait_for(whole(), timeout)
    except TimeoutError:
        timed_out = True
    finally:
        kill_group(proc)  # the whole group: on timeout, on cancel, and what it left behind
        if proc.returncode is None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(proc.wait())
        # Started here so that a cancelled hook is cleaned up after too (it runs on).
        settled = asyncio.shield(asyncio.to_thread(guard.settle)) if guard is not None else None
    return HookRun(
        None if timed_out else proc.returncode,
        redact(out.decode("utf-8", "replace")),
        redact(err.decode("utf-8", "replace")),
        timed_out,
        await settled if settled is not None else None,
    )


def verdict(run: HookRun, *, blocking: bool, timeout: float, rewrites: bool) -> Verdict:
    """What `run` decided: exit 0 with a JSON object on stdout (or nothing) and exit 2 (the
    reason on stderr) decide; a timeout, another status or unreadable output is a failure."""
    if run.timed_out:
        return Verdict(problem=f"did not finish in {timeout:g} s and was killed")
    reason = run.stderr.strip()[:REASON_CHARS]
    if run.exit_code == DENY_EXIT and blocking:
        return Verdict("deny", reason)
    if run.exit_code != 0:
        detail = f": {reason.splitlines()[-1]}" if reason else ""
        return Verdict(problem=f"failed with exit status {run.exit_code}{detail}")
    if not blocking or not run.stdout.strip():
        return Verdict()
    try:
        reply = json.loads(run.stdout)
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep
        reply = None
    if not isinstance(reply, dict):
        return Verdict(problem="printed something other than a JSON object; ignored")
    decision, said, args = reply.get("decision", "none"), reply.get("reason", ""), reply.get("args")
    if decision not in ("none", "allow", "deny") or not isinstance(said, str):
        return Verdict(problem='replied with a "decision" other than allow, deny or none')
    if args is not None and not (rewrites and isinstance(args, dict)):
        return Verdict(problem='replied with "args" that are not an object of tool arguments')
    return Verdict(decision, said[:REASON_CHARS], args)
