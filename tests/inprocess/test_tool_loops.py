"""A model that repeats its tool calls: told once (the call does not run), and a turn that
keeps looping ends with a plain message."""

from __future__ import annotations

from typing import Any


def read(i: int) -> dict:
    return {"tool_calls": [{"id": f"r{i}", "name": "read_file", "args": {"file_path": "a.py"}}]}


def edit(i: int, old: str, new: str) -> dict:
    args = {"file_path": "a.py", "old_string": old, "new_string": new}
    return {"tool_calls": [{"id": f"e{i}", "name": "edit_file", "args": args}]}


async def asked_about_a_py(agent) -> tuple[str, Any]:
    """With a.py holding `x = 1`, a new session asked what is in it: the session and the
    turn's response."""
    (agent.workspace / "a.py").write_text("x = 1\n")
    session = await agent.new_session()
    return session, await agent.prompt(session, "what is in a.py?")


async def test_the_same_call_three_times_is_not_run_and_the_model_is_told(
    agent_factory, model_requests
) -> None:
    async with agent_factory([read(1), read(2), read(3), {"content": "a.py holds x."}]) as agent:
        _, response = await asked_about_a_py(agent)
        assert response.stop_reason == "end_turn"
        assert agent.client.text().endswith("a.py holds x.")
        told = model_requests()[3]["messages"][-1]
        assert told["tool_call_id"] == "r3" and told["status"] == "error"
        assert told["content"].startswith(
            'Not run: this repeats the same call 3 times in a row: read_file {"file_path": "a.py"}'
        )
        cards = agent.client.cards()
        assert cards["r2"]["statuses"][-1] == "completed"
        assert cards["r3"]["statuses"][-1] == "failed"


async def test_a_turn_that_keeps_looping_ends_with_a_plain_message(
    agent_factory, model_requests
) -> None:
    turns = [read(i) for i in range(1, 8)] + [{"content": "next turn"}]
    async with agent_factory(turns) as agent:
        session, response = await asked_about_a_py(agent)
        assert response.stop_reason == "end_turn"
        assert agent.client.text().endswith(
            "Stopped: the agent kept repeating the same call 4 times in a row: read_file "
            '{"file_path": "a.py"} after it was told once, so this turn ends here. '
            "Send a message to go on."
        )
        assert len(model_requests()) == 4
        assert "r4" not in agent.client.cards()  # the call that went on looping never ran
        again = await agent.prompt(session, "go on")  # the thread is valid for the next turn
        assert again.stop_reason == "end_turn"


async def test_an_edit_undone_and_redone_is_not_made_again(agent_factory, model_requests) -> None:
    turns = [edit(1, "x = 1", "x = 2"), edit(2, "x = 2", "x = 1"), edit(3, "x = 1", "x = 2")]
    async with agent_factory([*turns, {"content": "Leaving it."}]) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        agent.client.answers = ["allow_once", "allow_once", "allow_once"]
        response = await agent.prompt(session, "fix a.py")
        assert response.stop_reason == "end_turn"
        assert (agent.workspace / "a.py").read_text() == "x = 1\n"
        asked = [r.tool_call.tool_call_id for r in agent.client.permission_requests]
        assert asked == ["e1", "e2"]  # the redo was never offered for approval
        told = model_requests()[3]["messages"][-1]
        assert told["tool_call_id"] == "e3"
        assert "a change to a.py that was undone, made again" in told["content"]
        assert agent.client.cards()["e3"]["statuses"][-1] == "failed"
