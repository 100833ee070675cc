"""A stdio MCP server's process: started on deepacp's lifeline, ended within a bound.

The server runs in a process group of its own beside a watchdog on the lifeline
(`deepacp.backends.shell.lifeline`), so it and whatever it starts die with deepacp however
deepacp ends. Closed, it is asked to exit as the MCP spec says (its input closed), given
`STOP_SECONDS`, and then its whole group is killed: an editor that quits gives deepacp
about two seconds to be gone with everything it started, and the MCP SDK's own stdio
client waits up to four for a server that ignores its closed input.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
from collections.abc import AsyncIterator, Sequence
from typing import IO, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from deepacp.backends.shell import kill_group, lifeline, watched

STOP_SECONDS = 0.5
"""How long a server has to exit once its input is closed; then its group is killed."""
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


def resolved(argv: Sequence[str], env: dict[str, str]) -> list[str]:
    """`argv` with its program found on the server's PATH (FileNotFoundError if it is not
    there: said here, not as a shell's exit status)."""
    program = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if program is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    return [program, *argv[1:]]


@contextlib.asynccontextmanager
async def server_streams(
    argv: Sequence[str], env: dict[str, str], cwd: str, stderr: IO[Any]
) -> AsyncIterator[Streams]:
    """The streams an MCP `ClientSession` reads and writes, to and from `argv` run in `cwd`."""
    fd = lifeline()
    process = await asyncio.create_subprocess_exec(
        *watched(resolved(argv, env), fd),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=(fd,),
        limit=MAX_MESSAGE_BYTES,
    )
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as pumps:
            pumps.start_soon(_read, process, to_session)
            pumps.start_soon(_write, process, from_session)
            yield from_server, to_server
            pumps.cancel_scope.cancel()
    finally:
        await stop(process)


async def _read(
    process: asyncio.subprocess.Process,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    assert process.stdout is not None
    async with to_session:
        while line := await process.stdout.readline():
            if not line.strip():
                continue
            try:
                message = types.JSONRPCMessage.model_validate_json(line)
            except ValueError as exc:  # the session reports it and reads on
                await to_session.send(exc)
                continue
            await to_session.send(SessionMessage(message))


async def _write(
    process: asyncio.subprocess.Process, from_session: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    assert process.stdin is not None
    async with from_session:
        async for message in from_session:
            data = message.message.model_dump_json(by_alias=True, exclude_none=True)
            try:
                process.stdin.write(data.encode() + b"\n")
                await process.stdin.drain()
            except ConnectionError:  # it exited: its output ends, and the session with it
                return


async def stop(process: asyncio.subprocess.Process) -> None:
    """Close the server's input, wait up to `STOP_SECONDS` for it to exit, then kill its
    group (the watchdog, and what the server left running); killed too when this is
    cancelled."""
    try:
        if process.stdin is not None:
            process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), STOP_SECONDS)
    finally:
        kill_group(process)
