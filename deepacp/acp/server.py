"""`deepacp --stdio`: answer `initialize` at once, then load the SDK and the harness.

The first response is written as the process starts (`early.py`), before asyncio is
imported; the server's handshake answers it only when that could not. The next request,
when it is a `session/load` that `quickload.py` can answer from what the last load sent,
is answered from that whenever it comes. Meanwhile the ACP SDK is imported (enough for
`session/new`, and for `session/load` from a saved replay), and then the harness —
LangChain, LangGraph, the configured provider — in a background thread, ready for the
first turn (`loading.py`). That import starts once the first request after `initialize` is
answered (or when something needs the harness, or after `HARNESS_START_SECONDS`): run at
once, it took half the CPU that request had.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from deepacp.acp.early import answer_initialize

if TYPE_CHECKING:
    from deepacp.acp.lifetime import Lifetime
    from deepacp.acp.transport import StdioTransport
    from deepacp.config import ServerOptions


async def handshake(transport: StdioTransport) -> dict | None:
    """Answer the first `initialize`; return its params (None if input ended first).

    A request that comes before it gets an error at once (a client that skipped
    `initialize` should not wait for its own timeout); notifications and responses are
    dropped.
    """
    import logging

    from deepacp.acp.capabilities import InitializeParamsError, initialize_result
    from deepacp.acp.transport import error_response

    while True:
        message = await transport.receive()
        if message is None:
            return None
        method = message.get("method")
        if method is None or "id" not in message:
            logging.getLogger("deepacp").info(
                "ignored %s before initialize", method or "a response"
            )
            continue
        if method != "initialize":
            await transport.send(
                error_response(
                    message["id"], -32600, f"Invalid Request: send initialize before {method}"
                )
            )
            continue
        try:
            result = initialize_result(message.get("params"))
        except InitializeParamsError as exc:
            await transport.send(error_response(message["id"], -32602, f"Invalid params: {exc}"))
            continue
        await transport.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return message["params"]


async def serve_stdio(
    options: ServerOptions, lifetime: Lifetime, params: dict | None, rest: bytes
) -> None:
    from deepacp.acp.transport import StdioTransport

    await serve_transport(await StdioTransport.open_stdio(rest), options, lifetime, params)


async def serve_transport(
    transport: StdioTransport,
    options: ServerOptions,
    lifetime: Lifetime | None = None,
    params: dict | None = None,
) -> None:
    """Serve ACP on `transport` until the client goes away (`params`: those of the
    `initialize` answered already; the tests' in-process tier serves a socket pair the
    same way)."""
    import asyncio

    from deepacp.acp.loading import HARNESS_START_SECONDS, import_sdk, load_harness
    from deepacp.acp.quickload import answer_load, transcripts_of
    from deepacp.config import deepacp_home
    from deepacp.session import open_store

    params = params if params is not None else await handshake(transport)
    if params is None:
        return
    store = open_store(deepacp_home())  # the one store of this process: one claim a session
    # The first request is answered from its transcript if it can be, whenever it comes;
    # meanwhile the SDK loads (enough for session/new and session/list), then the harness
    # in one other thread (the agent waits for it, never imports it concurrently).
    transcripts = transcripts_of(options, params, store)
    first = asyncio.ensure_future(answer_load(transport, transcripts, store))
    try:
        await asyncio.to_thread(import_sdk)  # before the harness thread, off the event loop
        from deepacp.acp.connection import run_connection

        harness = load_harness(options.model)
        transport.answered = harness.start
        asyncio.get_running_loop().call_later(HARNESS_START_SECONDS, harness.start)
        quick = await first
    finally:
        first.cancel()
    await run_connection(transport, params, options, harness, store, quick, lifetime)


def serve(options: ServerOptions | None = None) -> NoReturn:
    """Serve until the editor goes away (end of input, or a signal), then exit the process
    (see `lifetime.py`)."""
    early = answer_initialize()  # before anything else is imported
    from deepacp.acp.lifetime import Lifetime
    from deepacp.config import ServerOptions
    from deepacp.logs import configure

    options = options or ServerOptions()
    configure("acp")
    Lifetime().run(lambda lifetime: serve_stdio(options, lifetime, early.params, early.rest))
