"""The newer session updates as the ACP face builds them: what a client declared, and
each update valid against the 1.25 schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.utils import serialize_params

from deepacp.acp.newer import NewerUpdates
from deepacp.acp.newer_schema import Declared, declared_capabilities, declared_of
from deepacp.events import Compaction, Notice, SubagentStep, ToolFinished, ToolStarted
from deepacp.harness.contracts import ModelRetrySignal
from deepacp.session.core import QUEUED
from tests.support import acp_schema

ALL = Declared(notices=True, compaction=True, subagents=True)


def check(session_id: str, update: object, unstable: bool = False) -> dict:
    """The update as sent, checked against the 1.25 schema."""
    params = serialize_params(update)  # type: ignore[arg-type]
    message = {"sessionId": session_id, "update": params}
    acp_schema.check(
        {"jsonrpc": "2.0", "method": "session/update", "params": message}, unstable=unstable
    )
    return params


@pytest.mark.parametrize(
    ("raw", "declared"),
    [
        (None, Declared()),
        ({}, Declared()),
        ({"session": None, "subagents": None}, Declared()),
        ({"session": {"notices": True}}, Declared()),  # an object declares it, nothing else
        ({"session": {"notices": {}}}, Declared(notices=True)),
        ({"session": {"notices": {}, "compaction": {}}, "subagents": {}}, ALL),
        ({"declared": 5, "_declared": {"notices": True}}, Declared()),  # not ours to set
    ],
)
def test_what_a_client_declares(raw: object, declared: Declared) -> None:
    capabilities = declared_capabilities(raw)
    assert declared_of(capabilities) == declared
    assert "declared" not in capabilities.model_dump(by_alias=True)  # never echoed back


def test_each_notice_has_a_title_that_stands_alone() -> None:
    acp_schema.require()
    newer = NewerUpdates("s1", ALL)
    retry = ModelRetrySignal("overloaded", 2.0, 2, 5)
    notices = {
        QUEUED: Notice(QUEUED),
        "Retrying the model provider": Notice(retry.text, "warning", "Retrying the model provider"),
        "A hook refused the prompt": Notice("A hook refused the prompt: no", "warning"),
    }
    for title, notice in notices.items():
        [(to, update)] = newer.own(notice) or []
        sent = check("s1", update)
        assert to is None and sent["title"] == title.split(":")[0].rstrip(".")
        assert sent["description"] == notice.text and sent["severity"] == notice.severity
    assert NewerUpdates("s1", Declared()).own(Notice(QUEUED)) is None  # agent text instead


def test_a_failed_compaction_says_why_and_a_client_without_the_capability_hears_nothing() -> None:
    acp_schema.require()
    failed = Compaction("c1", "failed", error="the provider is down")
    [(_, update)] = NewerUpdates("s1", ALL).own(failed) or []
    assert check("s1", update) == {
        "sessionUpdate": "compaction_update",
        "compactionId": "c1",
        "status": "failed",
        "error": "the provider is down",
    }
    assert NewerUpdates("s1", Declared()).own(failed) == []


def test_a_failed_sub_agent_step_and_card(tmp_path: Path) -> None:
    acp_schema.require()
    card = ToolStarted("t1", "task", "other", "task", {"description": "x", "subagent_type": "a"})
    running = SubagentStep("t1", "c1", "edit_file", "Edit a.py", "edit", "in_progress")
    failed = SubagentStep("t1", "c1", "edit_file", "Edit a.py", "edit", "failed")
    plain = NewerUpdates("s1", Declared())
    plain.follow(card)
    plain.own(running)
    [(_, shown)] = plain.own(failed) or []
    assert [c["content"]["text"] for c in check("s1", shown)["content"]] == ["Edit a.py (failed)"]

    children = NewerUpdates("s1", ALL)
    children.follow(card)
    for event in (running, failed):
        for to, update in children.own(event) or []:
            check(to or "s1", update, unstable=True)
    [(_, idle)] = children.follow(ToolFinished("t1", "failed", "the sub-agent failed"))
    sent = check("s1", idle, unstable=True)
    assert sent["state"] == {"state": "idle", "stopReason": "error"}


def test_a_sub_agent_stopped_mid_call_leaves_no_call_running() -> None:
    acp_schema.require()
    children = NewerUpdates("s1", ALL)
    children.own(SubagentStep("t1", "c1", "execute", "npm test", "execute", "in_progress"))
    [(child, closed), (parent, idle)] = children.follow(ToolFinished("t1", "failed", "Cancelled"))
    assert (child, parent) == ("s1/subagent/t1", None)
    assert check(child, closed)["status"] == "failed"
    assert check("s1", idle, unstable=True)["sessionUpdate"] == "subagent_update"
