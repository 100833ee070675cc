"""The agent on one connection: the SDK's router in front of `DeepacpAgent`, with our errors
as one-line JSON-RPC errors, served until the client goes away."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future
from typing import Any

from acp.agent.router import build_agent_router
from acp.connection import Connection

from deepacp.acp.agent import DeepacpAgent
from deepacp.acp.lifetime import Lifetime
from deepacp.acp.quickload import QuickLoad
from deepacp.acp.rpc import request_error
from deepacp.acp.transport import StdioTransport
from deepacp.config import ServerOptions
from deepacp.errors import DeepacpError
from deepacp.session import Store


def make_handler(agent: DeepacpAgent) -> Any:
    """The SDK's router for the standard methods, plus the ones it does not route; our
    errors become one-line JSON-RPC errors."""
    router = build_agent_router(agent, use_unstable_protocol=True)
    extra = {"session/delete": agent.delete_session, "logout": agent.logout}

    async def handle(method: str, params: Any, is_notification: bool) -> Any:
        try:
            if method in extra and not is_notification:
                return await extra[method](params)
            if method == "$/cancel_request":
                return None  # a client may cancel a request it sent; ours finish promptly
            return await router(method, params, is_notification)
        except DeepacpError as exc:
            raise request_error(exc) from None

    return handle


async def run_connection(
    transport: StdioTransport,
    client_params: dict,
    options: ServerOptions,
    harness_loaded: Future | None = None,
    store: Store | None = None,
    quick: QuickLoad | None = None,
    lifetime: Lifetime | None = None,
) -> None:
    """Serve ACP on an already-initialized transport until the client goes away (`quick`:
    the session/load answered already from `store`, see `quickload.py`); then shut down,
    as `lifetime` allows (see `lifetime.py`)."""
    agent = DeepacpAgent(client_params, options, harness_loaded, store)
    conn = agent.conn = Connection(make_handler(agent), transport, listening=False)
    try:
        if quick is not None:  # before any other request is read
            await agent.loads.adopt(quick, agent._open)
        await conn.main_loop()
    finally:
        await (lifetime or Lifetime()).end(_shutdown(agent, conn))


async def _shutdown(agent: DeepacpAgent, conn: Connection) -> None:
    try:
        await agent.shutdown()
    finally:
        with contextlib.suppress(Exception):
            await conn.close()
