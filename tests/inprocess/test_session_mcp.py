"""A closed session lets go of its graph and of its MCP servers' tools (a real MCP server)."""

from __future__ import annotations

import gc
import sys
import weakref

from deepacp.models import resolve_model
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.mcp import McpServer
from deepacp.session.parts.mcp import McpPart
from deepacp.session.storage.sqlite import SessionStore
from tests.unit.session.test_manager import (  # noqa: F401 (workspace: a fixture)
    MCP_SERVER,
    Recorder,
    script,
    workspace,
)


async def test_a_closed_session_releases_its_graph_and_mcp_tools(
    tmp_path,
    workspace,  # noqa: F811 (the fixture)
) -> None:
    manager = SessionManager(SessionStore(tmp_path / "home"), resolve_model)
    env = (("NOTES_FILE", str(tmp_path / "notes.txt")),)
    notes = McpServer("notes", "stdio", sys.executable, (MCP_SERVER,), env)
    try:
        turns = [{"content": "hello"}, {"content": "again"}]
        record = manager.new_record(str(workspace), "ask", script(tmp_path, turns))
        session = manager.open(record, Workspace(str(workspace), mcp_servers=(notes,)), Recorder())
        assert await session.prompt("hi") == "end_turn"
        graph = weakref.ref(await session.graph())
        [tool, *_] = [weakref.ref(t) for t in session.part(McpPart).connections.tools]
        assert await manager.close(record.id)
        gc.collect()
        assert graph() is None, "the face still holds the session, but not its graph"
        assert tool() is None, "nor the MCP server's tools (and the connection they hold)"
        model = script(tmp_path, turns)
        async with manager.ephemeral(Workspace(str(workspace)), "ask", model, Recorder()) as once:
            assert await once.prompt("hi") == "end_turn"
            ephemeral = weakref.ref(await once.graph())
        gc.collect()
        assert ephemeral() is None, "an ephemeral session (an LSP edit) lets go of its graph"
    finally:
        await manager.shutdown()
