"""McpPart: the MCP servers the editor passed for the session (`mcp.McpServers`), started
with it, their tools in its graph (gated unless read-only), their failures told once."""

from __future__ import annotations

from collections.abc import Sequence

from deepacp.events import Event, Notice
from deepacp.secrets import register_secrets
from deepacp.session.assembly import Contributions
from deepacp.session.context import SessionContext
from deepacp.session.hosts.local import Ready
from deepacp.session.mcp import McpServer, McpServers, is_read_only
from deepacp.session.parts.base import Part


class McpPart(Part):
    def __init__(self, servers: Sequence[McpServer], imports_ready: Ready) -> None:
        for server in servers:  # credentials for a server are secrets from us too
            register_secrets(dict(server.env), dict(server.headers))
        self.servers = tuple(servers)
        self.imports_ready = imports_ready
        self.connections = McpServers()

    def bind(self, ctx: SessionContext) -> None:
        super().bind(ctx)
        self.connections.start(list(self.servers), ctx.record.cwd, self.imports_ready)

    async def _failures(self) -> list[Event]:
        """A notice for each server that could not start, not told before."""
        await self.connections.ready()
        failures, self.connections.failures = self.connections.failures, []
        return [
            Notice(
                f"MCP server {name!r} is not available: {why}",
                "error",
                f"MCP server {name!r} failed",
            )
            for name, why in failures
        ]

    async def opening(self) -> list[Event]:
        return await self._failures()

    async def contribute(self, parts: Contributions) -> None:
        for notice in await self._failures():
            await self.ctx.handler.emit(notice)
        parts.tools += self.connections.tools
        parts.gated |= {tool.name for tool in self.connections.tools if not is_read_only(tool)}

    async def closed(self) -> None:
        await self.connections.close()
