"""`deepacp lsp` served in the test's own process, for pytest-lsp's client.

The server is the one `deepacp lsp` builds (`deepacp.lsp.server.build`), behind the same
framing (`Frames`) and log set-up, served by pygls on its own thread and event loop as in
the binary, on one end of a socket pair; pytest-lsp's client speaks on the other. What
differs from the binary is what a process owns: the environment is the server's while it
runs, and the `initialize` answer is not read from the start-up cache (`deepacp.lsp.boot`,
which tests/e2e/test_lsp_start.py drives in a process of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from typing import Any

import attrs
from pygls.io_ import run_async
from pytest_lsp import ClientServerConfig

from tests.support.cli import restored_logging
from tests.support.inprocess import process_state

STOP_SECONDS = 30.0
"""How long the server may take to end once the client has gone."""


@attrs.define
class InProcess(ClientServerConfig):
    """pytest-lsp's configuration, with the server served in this process. `server_command`
    is what the binary would be given: `[deepacp, "lsp", *flags]`."""

    async def start(self, devtools: str | None = None) -> Any:
        client = self.client_factory()
        stop = await serve(client, self.server_command[2:], self.server_env or dict(os.environ))
        original = client.stop

        async def stopped() -> None:
            await stop()
            await original()

        client.stop = stopped
        return client


async def serve(client: Any, flags: list[str], env: dict[str, str]) -> Any:
    """Connect `client` to a server started as `deepacp lsp *flags` would start it, with
    `env` as the environment; returns the coroutine function that ends the server."""
    from deepacp.cli import build_parser, profile_flag, sandbox_flag
    from deepacp.logs import configure
    from deepacp.lsp.framing import Frames
    from deepacp.lsp.server import build

    args = build_parser().parse_args(["lsp", *flags])
    state = contextlib.ExitStack()
    with state:  # left open for `stop` once all is started
        state.enter_context(process_state(env, os.getcwd()))
        state.enter_context(restored_logging())
        configure("lsp", one_line=True)
        ours, theirs = socket.socketpair()
        server_in, server_out = theirs.makefile("rb"), theirs.makefile("wb")
        server = build(sandbox_flag(args.sandbox), profile_flag(args.profile))
        thread = threading.Thread(
            target=server.start_io, args=(Frames(server_in, server_out), server_out), daemon=True
        )
        thread.start()
        reader, writer = await asyncio.open_connection(sock=ours)
        client.protocol.set_writer(writer)
        client._async_tasks.append(
            asyncio.create_task(
                run_async(
                    stop_event=client._stop_event,
                    reader=reader,
                    protocol=client.protocol,
                    logger=logging.getLogger("client"),
                    error_handler=client.report_server_error,
                )
            )
        )
        state = state.pop_all()

    async def stop() -> None:
        try:
            with contextlib.suppress(OSError):
                ours.shutdown(socket.SHUT_WR)  # end of input: the server's loop ends
            await asyncio.to_thread(thread.join, STOP_SECONDS)
            if thread.is_alive():
                raise AssertionError(f"the server did not end {STOP_SECONDS:.0f} s after input")
        finally:
            writer.close()
            for stream in (server_in, server_out, theirs):
                with contextlib.suppress(OSError):
                    stream.close()
            state.close()

    return stop
