"""Sub-agents over ACP: their approvals appear on the parent's task card."""

from __future__ import annotations

from acp import schema as S

from tests.support.turns import edit, task

DELEGATE = [
    task("t1", "Set x to 2 in a.py."),
    edit("c1", "a.py", "x = 1", "x = 2"),
    {"content": "Changed x to 2."},
    {"content": "The sub-agent changed x."},
]


async def test_subagent_approval_is_asked_on_the_task_card(agent_factory) -> None:
    async with agent_factory(DELEGATE) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        agent.client.answers = ["allow_once"]
        response = await agent.prompt(session, "delegate it")
        assert response.stop_reason == "end_turn"
        assert (agent.workspace / "a.py").read_text() == "x = 2\n"
        [request] = agent.client.permission_requests
        assert request.tool_call.tool_call_id == "t1"
        assert request.tool_call.title == "Sub-agent: Edit a.py"
        cards = agent.client.cards()
        assert set(cards) == {"t1"}  # the child's own calls stay inside the task card
        task = cards["t1"]
        assert task["statuses"][0] == "pending" and task["statuses"][-1] == "completed"
        assert task["content"][-1].content.text == "Changed x to 2."
        progress = [
            [c.content.text for c in u.content]
            for u in agent.client.of(S.ToolCallProgress)
            if u.tool_call_id == "t1" and u.content and u.status is None
        ]
        # the child's steps are shown on the task card while it works, with their status
        assert progress == [["Edit a.py (running)"], ["Edit a.py (done)"]]


async def test_subagent_rejection_reaches_the_child_only(agent_factory) -> None:
    async with agent_factory(DELEGATE) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        agent.client.answers = ["reject_once"]
        assert (await agent.prompt(session, "delegate it")).stop_reason == "end_turn"
        assert (agent.workspace / "a.py").read_text() == "x = 1\n"
        assert agent.client.cards()["t1"]["statuses"][-1] == "completed"
