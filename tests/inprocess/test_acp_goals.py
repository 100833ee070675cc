"""Goals over ACP: `/goal` sets what done looks like; a grader checks each turn's end, sends
the agent back with its feedback, and every verdict reaches the editor."""

from __future__ import annotations

import asyncio
import json

from acp import schema as S

from tests.support.waits import wait_for

GOAL = "notes.txt says done"


def verdict(status: str, feedback: str) -> dict:
    return {"content": "Checked.\n" + json.dumps({"verdict": status, "feedback": feedback})}


def grader_calls(requests: list[dict]) -> list[dict]:
    return [r for r in requests if "You are the grader" in r["system"]]


def plan_entries(client) -> list[str]:
    return [e.content for p in client.of(S.AgentPlanUpdate) for e in p.entries]


async def test_a_goal_that_needs_two_rounds(agent_factory, model_requests) -> None:
    turns = [
        {"content": "Done, I think."},  # the agent stops early
        {  # the grader looks for itself, then asks for a revision
            "tool_calls": [{"id": "g1", "name": "read_file", "args": {"file_path": "notes.txt"}}]
        },
        verdict("needs_revision", "notes.txt still says todo; write done in it"),
        {
            "tool_calls": [
                {
                    "id": "w1",
                    "name": "write_file",
                    "args": {"file_path": "notes.txt", "content": "done\n"},
                }
            ]
        },
        {"content": "notes.txt now says done."},
        verdict("satisfied", "notes.txt says done"),
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "notes.txt").write_text("todo\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        await agent.prompt(session, f"/goal {GOAL}")
        assert "Goal set" in agent.client.text()
        response = await agent.prompt(session, "finish the notes")

        assert response.stop_reason == "end_turn"
        assert (agent.workspace / "notes.txt").read_text() == "done\n"
        requests = model_requests()
        assert len(grader_calls(requests)) == 3  # two gradings, the first with a read
        assert GOAL in grader_calls(requests)[0]["messages"][0]["content"]
        # The first verdict reached the agent as a message, and it acted on it.
        back = requests[3]["messages"][-1]
        assert back["type"] == "human" and "still says todo" in back["content"]
        # The editor saw both verdicts: as messages and in the plan.
        text = agent.client.text()
        assert "Goal needs revision (round 1 of 3): notes.txt still says todo" in text
        assert "Goal met (grader, round 2 of 3)" in text
        entries = plan_entries(agent.client)
        assert f"Goal: {GOAL} (needs revision, round 1 of 3)" in entries
        assert entries[-1] == f"Goal: {GOAL} (met)"
        cards = agent.client.cards()
        checks = [c for c in cards.values() if c.get("kind") == "think"]
        assert len(checks) == 2 and all(c["statuses"][-1] == "completed" for c in checks)


async def pursued(agent, goal: str) -> tuple[str, str]:
    """Set `goal` in a new session and say "go": the session, and the text shown once that
    turn ends."""
    session = await agent.new_session()
    await agent.prompt(session, f"/goal {goal}")
    response = await agent.prompt(session, "go")
    assert response.stop_reason == "end_turn"
    return session, agent.client.text()


async def test_out_of_rounds_ends_the_turn_truthfully(
    agent_factory, model_requests, tmp_path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[goal]\nrounds = 2\n")
    turns = [
        {"content": "Done."},
        verdict("needs_revision", "no tests were run"),
        {"content": "Really done."},
        verdict("needs_revision", "still no tests"),
        {"content": "next turn"},
    ]
    async with agent_factory(turns, home=home) as agent:
        _, text = await pursued(agent, "the tests pass")
        assert "Goal needs revision (round 1 of 2)" in text
        assert "Goal not met after 2 rounds; the last review: still no tests" in text
        assert plan_entries(agent.client)[-1] == "Goal: the tests pass (not met)"
        # The last feedback was not sent back: the agent was not asked a third time.
        assert len(model_requests()) == 4


async def test_a_grader_answer_that_is_not_a_verdict(agent_factory, model_requests) -> None:
    turns = [
        {"content": "Done."},
        {"content": "Looks fine to me, I guess!"},
        {"content": "after"},
    ]
    async with agent_factory(turns) as agent:
        session, text = await pursued(agent, "it works")
        assert "Goal not met (round 1 of 3): the grader's answer was not a verdict" in text
        assert "Looks fine to me" in text  # what it said instead, to judge by
        assert len(model_requests()) == 2  # the agent is not sent back on garbage
        await agent.prompt(session, "/goal clear")
        assert (await agent.prompt(session, "still up?")).stop_reason == "end_turn"
        assert agent.client.text().endswith("after")


async def test_cancel_during_grading(agent_factory, model_requests) -> None:
    turns = [
        {"content": "Done."},
        {"content": "word " * 2000, "delay_ms": 50},  # a grader that would take minutes
        {"content": "fresh answer"},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "/goal it works")
        task = asyncio.create_task(agent.prompt(session, "go"))
        await wait_for(lambda: any("(checking" in e for e in plan_entries(agent.client)))
        await wait_for(lambda: len(model_requests()) == 2)  # the grader's model call runs
        await agent.conn.cancel(session_id=session)
        response = await task
        assert response.stop_reason == "cancelled"
        assert "word" not in agent.client.text()  # the grader's words are not the agent's
        assert not any(v in agent.client.text() for v in ("Goal met", "Goal not", "revision ("))
        [check] = [c for c in agent.client.cards().values() if c.get("kind") == "think"]
        assert check["statuses"][-1] == "failed"
        await agent.prompt(session, "/goal clear")
        assert (await agent.prompt(session, "again")).stop_reason == "end_turn"
        assert agent.client.text().endswith("fresh answer")
        last = model_requests()[-1]
        assert not any("grader" in m["content"] for m in last["messages"])


async def test_the_goal_survives_a_restart_and_load(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    first = [
        {"content": "Done."},
        verdict("needs_revision", "write it down"),
        {"content": "Written."},
        verdict("satisfied", "written"),
    ]
    async with agent_factory(first, home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, f"/goal {GOAL}")
        await agent.prompt(session, "go")

    turns = [{"content": "Done."}, verdict("satisfied", "it says done")]
    async with agent_factory(turns, home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        # The grader's feedback is replayed as the grader's, not as something the user said.
        assert [u.content.text for u in agent.client.of(S.UserMessageChunk)] == ["go"]
        assert "needs revision:\nwrite it down" in agent.client.text()
        await agent.prompt(session, "/goal")
        assert f"Goal: {GOAL}" in agent.client.text()
        assert (await agent.prompt(session, "go")).stop_reason == "end_turn"
        assert "Goal met (grader, round 1 of 3): it says done" in agent.client.text()


async def test_the_grader_runs_an_approved_command_and_the_plan_keeps_the_tasks(
    agent_factory, model_requests
) -> None:
    todos = [{"content": "write the notes", "status": "completed"}]
    turns = [
        {"tool_calls": [{"id": "p1", "name": "write_todos", "args": {"todos": todos}}]},
        {"content": "Planned."},
        {"content": "Done."},
        {"tool_calls": [{"id": "g1", "name": "execute", "args": {"command": "cat notes.txt"}}]},
        verdict("satisfied", "the notes say done"),
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "notes.txt").write_text("done\n")
        session = await agent.new_session()
        await agent.prompt(session, "plan it")  # a task list from an earlier turn
        await agent.prompt(session, f"/goal {GOAL}")
        agent.client.answers = ["allow_once"]
        assert (await agent.prompt(session, "go")).stop_reason == "end_turn"

        [asked] = agent.client.permission_requests
        assert asked.tool_call.title == "Sub-agent: cat notes.txt"
        assert agent.client.cards()[asked.tool_call.tool_call_id]["kind"] == "think"
        [result] = [m for m in model_requests()[-1]["messages"] if m.get("tool_call_id") == "g1"]
        assert result["status"] == "success" and "done" in result["content"]
        last_plan = agent.client.of(S.AgentPlanUpdate)[-1]
        assert [e.content for e in last_plan.entries] == ["write the notes", f"Goal: {GOAL} (met)"]
