"""An edit that cannot apply is failed before anyone is asked about it."""

from __future__ import annotations

from acp import schema as S

from tests.support.turns import edit

MISSING_EDIT = [edit("e1", "hello.txt", "goodbye", "bye"), {"content": "I will read it first."}]


async def test_an_edit_whose_old_text_is_not_there_fails_without_asking(
    agent_factory, model_requests
) -> None:
    async with agent_factory(MISSING_EDIT) as agent:
        (agent.workspace / "hello.txt").write_text("hello\n")
        session = await agent.new_session()
        response = await agent.prompt(session, "change goodbye")
        assert response.stop_reason == "end_turn"
        assert agent.client.permission_requests == []  # nothing to approve
        card = agent.client.cards()["e1"]
        assert card["statuses"][0] == "pending" and card["statuses"][-1] == "failed"
        shown = card["content"][-1].content.text
        assert "old_string was not found in hello.txt" in shown
        assert (agent.workspace / "hello.txt").read_text() == "hello\n"
        told = next(m for m in model_requests()[1]["messages"] if m.get("tool_call_id") == "e1")
        assert "old_string was not found" in told["content"]


async def test_an_edit_that_applies_is_still_asked_about(agent_factory) -> None:
    turns = [edit("e1", "hello.txt", "hello", "hi"), {"content": "ok"}]
    async with agent_factory(turns) as agent:
        (agent.workspace / "hello.txt").write_text("hello\n")
        session = await agent.new_session()
        agent.client.answers = ["reject_once"]
        await agent.prompt(session, "change hello")
        asked = agent.client.permission_requests
        assert [r.tool_call.tool_call_id for r in asked] == ["e1"]
        assert any(isinstance(c, S.FileEditToolCallContent) for c in asked[0].tool_call.content)
        assert (agent.workspace / "hello.txt").read_text() == "hello\n"
