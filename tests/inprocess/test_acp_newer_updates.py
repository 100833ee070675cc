"""Notices, compactions and sub-agents as ACP 1.25 has them, for a client that declares it
shows them (`session.notices`, `session.compaction`, the unstable `subagents`); for one that
does not, the updates it knows and nothing else. Every message is checked against the
1.25 schema (and the SDK's models where it has them) when the agent stops."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import schema as S

from deepacp.session.core import QUEUED
from tests.providers.wire import Failure, Reply
from tests.support.acp import NEWER_UPDATES
from tests.support.providers import provider_agent
from tests.support.waits import wait_for

NEWER = {"session": {"notices": {}, "compaction": {}}, "subagents": {}}
NONE_OF_THEM: dict = {}
ALL_NEWER = (*NEWER_UPDATES, "subagent_update")
COMPACTION = ("compaction_update", "compaction_summary_chunk")
PROBLEM = "bwrap is not installed: install bubblewrap"
BRIEF = "Look around the workspace."
SUMMARY = "SUMMARY OF THE WORK"
WINDOW = 4_500
"""A context window the turn outgrows once it has read big.txt (about 1,750 tokens on
about 2,400 of prompt and tools): its last model call is summarized first."""
TURN = [
    {
        "tool_calls": [
            {
                "id": "t1",
                "name": "task",
                "args": {"description": BRIEF, "subagent_type": "general-purpose"},
            }
        ]
    },
    {"tool_calls": [{"id": "c1", "name": "ls", "args": {}}]},
    {"content": "The workspace holds big.txt."},
    {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"file_path": "big.txt"}}]},
    {"content": SUMMARY},
    {"content": "done"},
]


@pytest.fixture
def no_sandbox(monkeypatch):
    """This machine cannot sandbox commands (the session says so when it opens)."""
    monkeypatch.setattr("deepacp.session.parts.sandbox.sandbox_problem", lambda: PROBLEM)


async def delegate_and_outgrow(agent) -> str:
    """One prompt whose turn delegates to a sub-agent and then gets summarized."""
    script = json.loads(agent.script.read_text())
    agent.script.write_text(json.dumps({**script, "context_window": WINDOW}))
    lines = (f"{i:04d} " + "word " * 11 for i in range(330))
    (agent.workspace / "big.txt").write_text("\n".join(lines) + "\n")
    session = await agent.new_session()
    assert (await agent.prompt(session, "look, then read big.txt")).stop_reason == "end_turn"
    return session


async def test_a_client_that_declares_them_sees_a_notice_a_compaction_and_a_sub_agent(
    agent_factory, no_sandbox
) -> None:
    async with agent_factory(TURN, capabilities=NEWER) as agent:
        session = await delegate_and_outgrow(agent)
        wire = agent.wire
        assert agent.client.text(session) == "done"  # neither the notice nor the summary

        [(to, notice)] = wire.updates("notice")
        assert to == session
        assert notice["severity"] == "warning" and notice["title"] == "Sandbox unavailable"
        assert PROBLEM in notice["description"]

        compaction = [u for _, u in wire.updates(*COMPACTION)]
        [started, chunk, ended] = compaction
        assert started["sessionUpdate"] == "compaction_update"
        assert started["status"] == "in_progress"
        assert chunk["sessionUpdate"] == "compaction_summary_chunk"
        assert chunk["content"] == {"type": "text", "text": SUMMARY}
        assert ended["sessionUpdate"] == "compaction_update" and ended["status"] == "completed"
        assert started["compactionId"] == chunk["compactionId"] == ended["compactionId"]

        child = f"{session}/subagent/t1"
        traffic = [
            (to, update)
            for to, update in wire.updates("subagent_update", "tool_call", "tool_call_update")
            if to == child or update["sessionUpdate"] == "subagent_update"
        ]
        assert traffic == [
            (
                session,
                {
                    "sessionUpdate": "subagent_update",
                    "sessionId": child,
                    "title": "general-purpose",
                    "description": BRIEF,
                    "state": {"state": "running"},
                },
            ),
            (
                child,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "c1",
                    "title": "List .",
                    "kind": "read",
                    "status": "in_progress",
                    "name": "ls",
                },
            ),
            (
                child,
                {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
            ),
            (
                session,
                {
                    "sessionUpdate": "subagent_update",
                    "sessionId": child,
                    "state": {"state": "idle", "stopReason": "end_turn"},
                },
            ),
        ]
        task = agent.client.cards(session)["t1"]
        assert task["statuses"][-1] == "completed"
        assert [c.content.text for c in task["content"]] == ["The workspace holds big.txt."]


async def test_a_client_that_declares_none_gets_only_what_it_knows(
    agent_factory, no_sandbox
) -> None:
    async with agent_factory(TURN, capabilities=NONE_OF_THEM) as agent:
        session = await delegate_and_outgrow(agent)
        assert agent.wire.updates(*ALL_NEWER) == []
        assert {to for to, _ in agent.client.updates} == {session}  # no child session
        text = agent.client.text(session)
        assert f"Commands are not sandboxed: {PROBLEM}" in text  # the notice, as text
        assert SUMMARY not in text  # a summary's model call is not the agent's answer
        assert text.endswith("done")

        shown = [
            [c.content.text for c in u.content]
            for _, u in agent.client.updates
            if getattr(u, "tool_call_id", None) == "t1" and u.content and u.status is None
        ]
        assert shown == [["List . (running)"], ["List . (done)"]]  # in place, with status
        task = agent.client.cards(session)["t1"]
        assert [c.content.text for c in task["content"]] == ["The workspace holds big.txt."]


async def test_a_load_redraws_the_conversation_not_what_was_live(
    agent_factory, no_sandbox, tmp_path: Path
) -> None:
    """Notices, compactions and child sessions are live, not history: a `session/load`
    redraws the turn's cards as they ended (the task card with its report), and the
    session's opening notices again, as a new session shows them."""
    home = tmp_path / "home"
    async with agent_factory(TURN, capabilities=NEWER, home=home) as agent:
        session = await delegate_and_outgrow(agent)
        live = agent.client.cards(session)
    async with agent_factory([], capabilities=NEWER, home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        loaded = agent.client.cards(session)
        kinds = [u["sessionUpdate"] for _, u in agent.wire.updates(*ALL_NEWER)]
        assert kinds == ["notice"]  # the sandbox's, as the session opens
        assert {to for to, _ in agent.client.updates} == {session}
    for card in ("t1", "r1"):
        assert loaded[card]["content"] == live[card]["content"]
        assert loaded[card]["statuses"][-1] == live[card]["statuses"][-1]


async def test_a_compact_command_reports_its_compaction(agent_factory) -> None:
    turns = [{"content": "first " + "detail " * 50}, {"content": "second"}, {"content": SUMMARY}]
    async with agent_factory(turns, capabilities=NEWER) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "/compact")).stop_reason == "end_turn"
        assert agent.wire.updates(*COMPACTION) == []
        await agent.prompt(session, "one " + "context " * 50)
        await agent.prompt(session, "two")
        await agent.prompt(session, "/compact")
        updates = [u for _, u in agent.wire.updates(*COMPACTION)]
        assert [(u["sessionUpdate"], u.get("status")) for u in updates] == [
            ("compaction_update", "in_progress"),
            ("compaction_summary_chunk", None),
            ("compaction_update", "completed"),
        ]
        assert updates[1]["content"]["text"] == SUMMARY
        assert len({u["compactionId"] for u in updates}) == 1
        assert "Compacted" in agent.client.text(session)


async def test_a_failed_mcp_server_is_an_error_notice(agent_factory) -> None:
    async with agent_factory([{"content": "still fine"}], capabilities=NEWER) as agent:
        broken = S.McpServerStdio(name="ghost", command="/no/such/mcp-server", args=[], env=[])
        response = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[broken])
        session = response.session_id
        assert (await agent.prompt(session, "hello")).stop_reason == "end_turn"
        [(_, notice)] = agent.wire.updates("notice")
        assert notice["severity"] == "error" and notice["title"] == "MCP server 'ghost' failed"
        assert "/no/such/mcp-server" in notice["description"]
        assert agent.client.text(session) == "still fine"


async def test_a_provider_retry_is_a_warning_notice(tmp_path: Path, anthropic_server) -> None:
    anthropic_server.add(Failure(529), Reply(text="Back."))
    async with provider_agent(tmp_path, "anthropic", anthropic_server, capabilities=NEWER) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "hello")).stop_reason == "end_turn"
        [(_, notice)] = agent.wire.updates("notice")
        assert notice["severity"] == "warning" and notice["title"] == "Retrying the model provider"
        assert notice["description"].startswith("provider overloaded, retrying in ")
        assert agent.client.text(session) == "Back."


async def test_a_queued_prompt_is_acknowledged_by_a_notice(agent_factory) -> None:
    slow = {"content": "word " * 200, "delay_ms": 20}
    async with agent_factory([slow, {"content": "second"}], capabilities=NEWER) as agent:
        session = await agent.new_session()
        first = asyncio.create_task(agent.prompt(session, "first"))
        await wait_for(lambda: "word" in agent.client.text(session), 30.0)
        second = asyncio.create_task(agent.prompt(session, "second"))
        await wait_for(lambda: agent.wire.updates("notice"))  # acknowledged at once
        [(_, notice)] = agent.wire.updates("notice")
        assert notice == {
            "sessionUpdate": "notice",
            "severity": "info",
            "title": "Your next message is queued",
            "description": QUEUED,
        }
        await asyncio.gather(first, second)
        assert QUEUED not in agent.client.text(session)


async def test_a_client_that_declares_only_subagents_reads_the_unstable_schema(
    agent_factory,
) -> None:
    """`subagents` is a capability of the unstable schema alone, which the SDK's model drops:
    the turn's usage still goes in the prompt response's own field for that client."""
    async with agent_factory([{"content": "Done."}], capabilities={"subagents": {}}) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "go")).stop_reason == "end_turn"
        [message] = [m for m in agent.wire.incoming if "stopReason" in m.get("result", {})]
    assert message["result"]["usage"]["totalTokens"] > 0
