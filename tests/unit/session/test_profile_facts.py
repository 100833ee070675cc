"""What a model's server says about itself chooses the profile when the user did not: a
server on this machine with a small context gets the compact one; the user's choice wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepacp.harness import ServerFacts
from deepacp.models import resolve_model
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.storage.sqlite import SessionStore
from tests.unit.session.test_manager import Recorder


async def first_tools(tmp_path: Path, facts: ServerFacts) -> tuple[list[str], list[str]]:
    """The tools of the session's first model request, and the specs the facts were asked for."""
    workspace, record = tmp_path / "workspace", tmp_path / "requests.jsonl"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "ok"}], "record": str(record)}))
    asked: list[str] = []

    def server_facts(spec: str) -> ServerFacts:
        asked.append(spec)
        return facts

    manager = SessionManager(
        SessionStore(tmp_path / "home"), resolve_model, server_facts=server_facts
    )
    try:
        session_record = manager.new_record(str(workspace), "ask", f"scripted:{script}")
        session = manager.open(session_record, Workspace(str(workspace)), Recorder())
        await session.prompt("hi")
    finally:
        await manager.shutdown()
    (request,) = [json.loads(line) for line in record.read_text().splitlines()]
    return request["tools"], asked


@pytest.mark.parametrize(
    ("facts", "compact"),
    [
        (ServerFacts(local=True, context=2048), True),
        (ServerFacts(local=True, context=32768), False),
    ],
)
async def test_a_small_local_server_gets_the_compact_profile(tmp_path, facts, compact, monkeypatch):
    monkeypatch.setenv("DEEPACP_HOME", str(tmp_path / "home"))
    tools, asked = await first_tools(tmp_path, facts)
    assert ("write_todos" not in tools) == compact, tools
    assert asked == [f"scripted:{tmp_path / 'script.json'}"]


async def test_the_users_choice_beats_what_the_server_says(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPACP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPACP_PROFILE", "default")
    tools, _ = await first_tools(tmp_path, ServerFacts(local=True, context=2048))
    assert "write_todos" in tools
