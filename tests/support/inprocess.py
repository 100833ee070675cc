"""`deepacp --stdio` served in the test's own process: the real `DeepacpAgent` behind the
real transport, on one end of a socket pair, and the ACP SDK's client on the other.

What differs from the binary is only what a process owns: the environment and working
folder are the server's for the duration (as `spawn_agent_process` would give it), the log
goes where `deepacp --stdio` writes it, and no signal handlers are installed. What needs a
process of its own (start-up and import timing, signals, kill -9, stdio framing) stays in
tests/e2e/.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp.client.connection import ClientSideConnection

from tests.support.cli import restored_logging

READ_LIMIT = 1 << 20
SHUTDOWN_SECONDS = 30.0
"""How long the server may take to close its sessions once the client has gone."""


def warm_imports() -> None:
    """What `deepacp --stdio` imports (the SDK, then the harness in its thread) and what
    `deepacp lsp` adds (pygls and its server), imported once per test process before its
    first in-process test (`tiers.py`): that is the binaries' start-up cost, which tests/e2e/
    measures, not a test's (a first chunk waited for would wait on it)."""
    from deepacp.acp.loading import import_sdk, load_harness

    import_sdk()
    harness = load_harness(None)
    harness.start()
    harness.result()
    import deepacp.lsp.server  # noqa: F401


@contextlib.contextmanager
def process_state(env: Mapping[str, str], cwd: Path) -> Iterator[None]:
    """This process's environment replaced by `env` and its folder by `cwd`, then both back."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


@contextlib.contextmanager
def server_log() -> Iterator[None]:
    """The server's log set up as `deepacp --stdio` sets it up, and taken down after."""
    from deepacp.logs import configure

    with restored_logging():
        configure("acp")
        yield


@contextlib.asynccontextmanager
async def serve_in_process(
    client: Any,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    observers: Sequence[Any] = (),
) -> AsyncIterator[ClientSideConnection]:
    """A client connection to a server running `deepacp *args` (which must hold `--stdio`)
    in this process."""
    from deepacp.acp.server import serve_transport
    from deepacp.acp.transport import StdioTransport
    from deepacp.cli import build_parser, server_options

    options = server_options(build_parser().parse_args(list(args)))
    with process_state(env, cwd), server_log():
        ours, theirs = socket.socketpair()
        server_reader, server_writer = await asyncio.open_connection(sock=theirs, limit=READ_LIMIT)
        reader, writer = await asyncio.open_connection(sock=ours, limit=READ_LIMIT)
        server = asyncio.create_task(
            serve_transport(StdioTransport(server_reader, server_writer), options)
        )
        conn = ClientSideConnection(
            client, writer, reader, observers=list(observers), use_unstable_protocol=True
        )
        try:
            yield conn
        finally:
            await conn.close()
            with contextlib.suppress(OSError):
                writer.close()
            try:  # end of input: the server closes its sessions and returns
                await asyncio.wait_for(server, SHUTDOWN_SECONDS)
            finally:
                server_writer.close()
