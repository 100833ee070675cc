"""Cards are for people: what a tool tells the model to do next stays in the result the
model reads, off the card."""

from __future__ import annotations

import asyncio

START = {
    "tool_calls": [
        {
            "id": "s1",
            "name": "start_background_task",
            "args": {"description": "BG-1: say done", "subagent_type": "general-purpose"},
        }
    ]
}
CHECK = {"tool_calls": [{"id": "k", "name": "check_background_task", "args": {"task_id": "bg-s1"}}]}


async def test_background_task_cards_carry_no_advice_for_the_model(
    agent_factory, model_requests
) -> None:
    turns = [
        START,
        {"content": "BG-1 is done.", "when": "BG-1"},
        {"content": "Started it."},
        CHECK,
        {"tool_calls": [{**CHECK["tool_calls"][0], "id": "k2"}]},
        {"content": "It is done."},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "start it")
        card = agent.client.cards()["s1"]["content"][-1].content.text
        assert card.startswith("Started background task bg-s1")
        assert "check_background_task" not in card and " you " not in f" {card} "
        told = [m for r in model_requests() for m in r["messages"] if m.get("tool_call_id") == "s1"]
        assert 'check_background_task("bg-s1")' in told[0]["content"]  # the model still reads it

        while not any("(finished)" in str(u) for _, u in agent.client.updates):
            await asyncio.sleep(0.05)  # the task's end shows in the plan
        await agent.prompt(session, "check it")
        again = agent.client.cards()["k2"]["content"][-1].content.text
        assert again.endswith("its report was given to the agent already.")
        told = next(m for m in model_requests()[-1]["messages"] if m.get("tool_call_id") == "k2")
        assert told["content"].endswith("its report was given to you already.")
