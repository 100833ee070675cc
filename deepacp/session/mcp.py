"""MCP servers a client passes in `session/new`: one held connection per server per session.

Each server runs in a task of its own (the MCP SDK's transports must be closed by the task
that opened them) and stays connected until the session closes, so a tool call costs a
request on an open connection, not a new process. A server that fails to start, or does
not finish starting (initialize, tools/list) within the start-up time, is reported and left
out; the session works without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_mcp_adapters.sessions import SSEConnection, StreamableHttpConnection

log = logging.getLogger(__name__)

START_TIMEOUT = 30.0
"""Seconds a server has to start, answer `initialize` and list its tools
(`DEEPACP_MCP_TIMEOUT` overrides it)."""


CLOSE_SECONDS = 1.0
"""How long closing the servers may take (a stdio server has `mcp_process.STOP_SECONDS`
of it to exit by itself)."""


def start_timeout() -> float:
    try:
        return float(os.environ.get("DEEPACP_MCP_TIMEOUT", START_TIMEOUT))
    except ValueError:
        return START_TIMEOUT


@dataclass(frozen=True)
class McpServer:
    """A server as the client described it (transport: stdio, http or sse)."""

    name: str
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    def connection(self) -> SSEConnection | StreamableHttpConnection:
        """The langchain-mcp-adapters connection config of an http or sse server (a stdio
        server is started by `stdio_session`, which keeps its stderr)."""
        headers = dict(self.headers) or None
        if self.transport == "http":
            return {"transport": "streamable_http", "url": self.url, "headers": headers}
        return {"transport": "sse", "url": self.url, "headers": headers}


class ServerLog:
    """Where a stdio server's stderr goes: our log, line by line, with secrets redacted
    (it may echo the credential the client gave it), not straight to deepacp's stderr."""

    def __init__(self, name: str) -> None:
        read, write = os.pipe()
        self.writer = os.fdopen(write, "w")  # the server's stderr
        reader = os.fdopen(read, "r", encoding="utf-8", errors="replace")
        threading.Thread(target=self._pump, args=(name, reader), daemon=True).start()

    @staticmethod
    def _pump(name: str, reader: Any) -> None:
        with reader:
            for line in reader:
                log.warning("MCP server %s: %s", name, line.rstrip())  # redacted by the filter

    def close(self) -> None:
        self.writer.close()  # the pump ends once the server's copy closes too


@contextlib.asynccontextmanager
async def stdio_session(server: McpServer, cwd: str, errlog: ServerLog) -> AsyncIterator[Any]:
    """An MCP session with a stdio server whose stderr goes to `errlog` (its process:
    `mcp_process.py`)."""
    from mcp import ClientSession
    from mcp.client.stdio import get_default_environment

    from deepacp.session.mcp_process import server_streams

    env = {**get_default_environment(), **dict(server.env)}
    argv = [server.command, *server.args]
    async with (
        server_streams(argv, env, cwd, errlog.writer) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session


def describe(exc: BaseException) -> str:
    """One readable line for a failure, looking inside exception groups (anyio's)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def tool_prefix(server: str) -> str:
    """Server names as tool-name prefixes: providers accept [A-Za-z0-9_-] only."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", server).strip("_") or "mcp"


def is_read_only(tool: Any) -> bool:
    """MCP tools declare `readOnlyHint` when they change nothing; the rest are gated."""
    return bool((getattr(tool, "metadata", None) or {}).get("readOnlyHint"))


@dataclass
class McpServers:
    """The connections of one session."""

    tools: list[Any] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    _tasks: dict[asyncio.Task, asyncio.Future] = field(default_factory=dict)
    """Each server's task, and the future it sets once connected (or failed)."""
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _ready: asyncio.Future | None = None

    def start(
        self, servers: list[McpServer], cwd: str, imports_ready: Callable[[], Awaitable[None]]
    ) -> None:
        """Connect in the background, once `imports_ready()` says the MCP client can be
        imported (not while another thread imports LangChain); `ready()` waits for every
        server to be up or failed."""
        if not servers:
            return
        futures = [asyncio.get_running_loop().create_future() for _ in servers]
        for server, future in zip(servers, futures, strict=True):
            serve = self._serve(server, cwd, future, imports_ready)
            self._tasks[asyncio.create_task(serve)] = future
        self._ready = asyncio.ensure_future(self._gather(servers, futures))

    async def _gather(self, servers: list[McpServer], futures: list[asyncio.Future]) -> None:
        for server, future in zip(servers, futures, strict=True):
            try:
                self.tools.extend(await future)
            except Exception as exc:
                reason = describe(exc)
                self.failures.append((server.name, reason))
                log.warning("MCP server %s failed to start: %s", server.name, reason)

    async def ready(self) -> None:
        if self._ready is not None:
            await asyncio.shield(self._ready)

    async def _serve(
        self,
        server: McpServer,
        cwd: str,
        ready: asyncio.Future,
        imports_ready: Callable[[], Awaitable[None]],
    ) -> None:
        try:
            await imports_ready()
            from langchain_mcp_adapters.sessions import create_session
            from langchain_mcp_adapters.tools import load_mcp_tools
        except ImportError:
            missing = "langchain-mcp-adapters is missing from this installation: reinstall deepacp"
            ready.set_exception(RuntimeError(missing))
            return
        except BaseException as exc:  # the harness failed to load, or the session closed
            ready.set_exception(RuntimeError(describe(exc)))
            raise
        timeout = start_timeout()
        errlog = ServerLog(server.name) if server.transport == "stdio" else None
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:  # every start-up step: the process or connection, initialize, tools/list
                    async with asyncio.timeout(timeout):
                        connection = (
                            stdio_session(server, cwd, errlog)
                            if errlog is not None
                            else create_session(server.connection())
                        )
                        session = await stack.enter_async_context(connection)
                        await session.initialize()
                        tools = await load_mcp_tools(
                            session, server_name=tool_prefix(server.name), tool_name_prefix=True
                        )
                except TimeoutError:
                    raise TimeoutError(f"no answer within {timeout:g} s") from None
                ready.set_result(tools)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if errlog is not None:
                errlog.close()

    async def close(self) -> None:
        """End every server: one still starting at once, a connected one as
        `mcp_process.stop` does (its input closed, then its group killed); within
        `CLOSE_SECONDS` in any case."""
        self._stop.set()
        for task, connected in self._tasks.items():
            if not connected.done():
                task.cancel()
        if self._tasks:
            _, slow = await asyncio.wait(self._tasks, timeout=CLOSE_SECONDS)
            for task in slow:  # cancelled, a stdio server's group is killed as it ends
                task.cancel()
        self._tasks.clear()
        self.tools.clear()  # they hold their connection's session
