"""One assembly: a session's graph in this process and the LangGraph app's graph for a
`--server` session are built by the same function, from the same middleware, and a goal
set in the session reaches the server's graph."""

from __future__ import annotations

import json
from pathlib import Path

from deepacp.langgraph_app import make_graph
from deepacp.models import resolve_model
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.parts.goal import GoalPart
from deepacp.session.store import SessionStore

GRADING = "GoalMiddleware.after_model"


class Recorder:
    async def emit(self, event) -> None:
        return None

    async def ask_permission(self, request):
        return "reject_once"

    async def ask(self, question):
        return None


def _middleware(graph) -> set[str]:
    return {node.split(".")[0] for node in graph.nodes if "Middleware" in node}


async def test_the_server_graph_is_the_sessions_graph(tmp_path: Path, monkeypatch) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": []}))
    spec = f"scripted:{script}"
    monkeypatch.setenv("DEEPACP_HOME", str(tmp_path / "home"))
    manager = SessionManager(SessionStore(tmp_path / "home"), resolve_model)
    try:
        record = manager.new_record(str(workspace), "ask", spec)
        session = manager.open(record, Workspace(str(workspace)), Recorder())
        session.part(GoalPart).set("tests pass")
        local = await session.graph()
    finally:
        await manager.shutdown()
    settings = {"workspace": str(workspace), "model": spec, "thread_id": "t"}
    served = make_graph({"configurable": {**settings, "goal": "tests pass"}})
    # The same middleware, but for what only reaches a graph in this process: the hooks
    # and the inbox (messages steered into a running turn, review notes).
    assert _middleware(served) == _middleware(local) - {"HookMiddleware", "InboxMiddleware"}
    assert GRADING in served.nodes
    assert GRADING not in make_graph({"configurable": settings}).nodes
