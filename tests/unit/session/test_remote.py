"""What a LangGraph server streams, revived into what a local run streams (so one
projection serves both), and the settings a run carries there."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langgraph.types import Interrupt

from deepacp.errors import ConfigError
from deepacp.harness.contracts import (
    EditArtifact,
    ModelRetrySignal,
    NoticeSignal,
    ToolOutputSignal,
    signal_from_json,
)
from deepacp.session.hosts.server_graph import message_from_json, to_json, update_from_json
from deepacp.session.hosts.threads import RunSettings, server_thread_id
from deepacp.session.turns import projection
from deepacp.session.turns.approvals import ApprovalPolicy


def over_the_wire(value):
    """As the server sends it: JSON."""
    return json.loads(json.dumps(to_json(value)))


def test_messages_come_back_as_the_messages_they_were() -> None:
    artifact = EditArtifact("a.py", "/w/a.py", "x = 1\n", "x = 2\n").as_json()
    sent = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"id": "e", "name": "edit_file", "args": {"file_path": "a"}}]),
        ToolMessage("Edited", tool_call_id="e", name="edit_file", artifact=artifact),
        AIMessageChunk(
            content="str", tool_call_chunks=[{"id": "c", "name": "ls", "args": "{", "index": 0}]
        ),
    ]
    back = [message_from_json(m) for m in over_the_wire(sent)]
    assert [type(m) for m in back] == [type(m) for m in sent]
    assert back[1].tool_calls[0]["id"] == "e"
    assert back[2].artifact == artifact and back[2].tool_call_id == "e"
    assert back[3].tool_call_chunks[0]["args"] == "{"


def test_the_projection_sees_a_served_turn_as_a_local_one() -> None:
    call = {"id": "e", "name": "edit_file", "args": {"file_path": "a.py"}}
    artifact = EditArtifact("a.py", "/w/a.py", "x = 1\n", "x = 2\n").as_json()
    updates = [
        {"model": {"messages": [AIMessage("", tool_calls=[call])]}},
        {"tools": {"messages": [ToolMessage("Edited", tool_call_id="e", artifact=artifact)]}},
    ]

    class NoFiles:
        def workspace_path(self, path):
            return path

        def disk_path(self, path):
            return None

    local, served = (projection.LiveProjection(NoFiles(), None) for _ in range(2))
    local_events = [e for u in updates for e in local.feed((), "updates", u)]
    served_events = [
        e
        for u in over_the_wire(updates)
        for e in served.feed((), "updates", {n: update_from_json(n, v) for n, v in u.items()})
    ]
    assert served_events == local_events
    assert served_events[-1].diff.new_text == "x = 2\n"


def test_interrupts_and_signals_are_revived() -> None:
    [interrupt] = update_from_json("__interrupt__", [{"id": "i1", "value": {"tool_call_id": "e"}}])
    assert interrupt == Interrupt(value={"tool_call_id": "e"}, id="i1")
    assert signal_from_json({"tool_call_id": "x", "text": "hi"}) == ToolOutputSignal("x", "hi")
    retry = {"reason": "overloaded", "delay": 1.0, "attempt": 2, "attempts": 3}
    assert signal_from_json(retry) == ModelRetrySignal("overloaded", 1.0, 2, 3)
    assert signal_from_json({"notice": "left .vscode"}) == NoticeSignal("left .vscode")
    assert signal_from_json({"other": 1}) == {"other": 1}


def test_run_settings_round_trip_the_policy(tmp_path) -> None:
    policy = ApprovalPolicy(mode="accept-edits")
    policy.always_allow.add(("execute", "make test"))
    policy.asked.add("call-1")
    settings = RunSettings.of(str(tmp_path), "scripted:/s.json", policy)
    back = RunSettings.from_configurable(over_the_wire(settings.as_configurable()), "/tmp")
    assert back == settings


def test_a_bad_workspace_or_mode_is_a_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not a folder on the server"):
        RunSettings.from_configurable({"workspace": str(tmp_path / "missing")}, "/tmp")
    with pytest.raises(ConfigError, match="unknown mode"):
        RunSettings.from_configurable({"workspace": str(tmp_path), "mode": "root"}, "/tmp")


def test_thread_ids_are_spelled_as_the_server_keys_them() -> None:
    assert server_thread_id("0123456789abcdef0123456789abcdef") == (
        "01234567-89ab-cdef-0123-456789abcdef"
    )
