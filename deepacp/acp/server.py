"""`deepacp --stdio`: answer `initialize` at once, then load the SDK and the harness.

The first response is built from `capabilities.py` with nothing but the standard library
loaded; so is the next one when it is a `session/load` that `quickload.py` can answer from
what the last load sent. Then the ACP SDK is imported (enough for `session/new`, and for
`session/load` from a saved replay), and the harness — LangChain, LangGraph, the configured
provider — in a background thread, ready for the first turn. That import starts once the
first request after `initialize` is answered (or when something needs the harness, or
after `HARNESS_START_SECONDS`): run at once, it took half the CPU that request had.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from typing import NoReturn

from deepacp.acp.capabilities import InitializeParamsError, initialize_result
from deepacp.acp.lifetime import Lifetime
from deepacp.acp.transport import StdioTransport, error_response
from deepacp.config import ServerOptions, deepacp_home

log = logging.getLogger("deepacp")

HARNESS_START_SECONDS = 0.5
"""How long the harness import waits for the first request to be answered, at most."""


class HarnessImport(Future):
    """Done once the harness can be used; its import begins at `start()` (any thread, any
    number of times)."""

    def __init__(self) -> None:
        super().__init__()
        self.begin = threading.Event()

    def start(self) -> None:
        self.begin.set()


def load_harness(model_spec: str | None) -> HarnessImport:
    """Import the harness (LangChain, LangGraph), then the configured provider's package, in
    a background thread, once started."""
    loaded = HarnessImport()

    def work() -> None:
        loaded.begin.wait()
        try:
            from deepacp.session.assembly import import_harness

            import_harness()
        except BaseException as exc:
            loaded.set_exception(exc)
            return
        loaded.set_result(None)
        try:
            from deepacp.models import PROVIDERS, configured_spec, split_spec

            provider = PROVIDERS.get(split_spec(configured_spec(model_spec))[0])
            if provider is not None:
                __import__(provider.package)
        except Exception:  # a broken setup is reported when a session needs it
            log.debug("warm-up import failed", exc_info=True)

    threading.Thread(target=work, name="deepacp-harness-import", daemon=True).start()
    return loaded


def import_sdk() -> None:
    """Import the ACP SDK (its schema the cheap way, see `lean.py`) and the agent, before
    any other thread defines pydantic models. Run in a thread: it takes a second or two
    under load, and a signal meanwhile must end the process at once (`lifetime.py`)."""
    from deepacp.acp.lean import import_acp_schema

    import_acp_schema()
    import deepacp.acp.agent  # noqa: F401


async def handshake(transport: StdioTransport) -> dict | None:
    """Answer the first `initialize`; return its params (None if input ended first).

    A request that comes before it gets an error at once (a client that skipped
    `initialize` should not wait for its own timeout); notifications and responses are
    dropped.
    """
    while True:
        message = await transport.receive()
        if message is None:
            return None
        method = message.get("method")
        if method is None or "id" not in message:
            log.info("ignored %s before initialize", method or "a response")
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


async def serve_stdio(options: ServerOptions, lifetime: Lifetime) -> None:
    await serve_transport(await StdioTransport.open_stdio(), options, lifetime)


async def serve_transport(
    transport: StdioTransport, options: ServerOptions, lifetime: Lifetime | None = None
) -> None:
    """Serve ACP on `transport` until the client goes away (the tests' in-process tier
    serves a socket pair the same way)."""
    params = await handshake(transport)
    if params is None:
        return
    from deepacp.acp.quickload import answer_load
    from deepacp.session.store import open_store

    store = open_store(deepacp_home())  # the one store of this process: one claim a session
    quick = await answer_load(transport, options, params, store)
    # The SDK is enough for session/new and session/list; the harness loads meanwhile in
    # one other thread (the agent waits for it, never imports it concurrently).
    await asyncio.to_thread(import_sdk)  # before the harness thread, off the event loop
    from deepacp.acp.agent import run_connection

    harness = load_harness(options.model)
    transport.answered = harness.start
    asyncio.get_running_loop().call_later(HARNESS_START_SECONDS, harness.start)
    await run_connection(transport, params, options, harness, store, quick, lifetime)


def serve(options: ServerOptions | None = None) -> NoReturn:
    """Serve until the editor goes away (end of input, or a signal), then exit the process
    (see `lifetime.py`)."""
    options = options or ServerOptions()
    from deepacp.logs import configure

    configure("acp")
    Lifetime().run(lambda lifetime: serve_stdio(options, lifetime))
