"""A prompt cancelled before the model was called (a fresh process still loading the
harness) still happened: it is in the history, it is a restore point, and it titles the
session."""

from __future__ import annotations

import asyncio

from acp import schema as S

from tests.support.waits import assert_history_valid, wait_for


async def test_a_prompt_cancelled_while_the_harness_loads_leaves_its_trace(
    agent_factory, tmp_path, model_requests
) -> None:
    home = tmp_path / "home"
    async with agent_factory([{"content": "a later answer"}], home=home) as agent:
        session = await agent.new_session()
        task = asyncio.create_task(agent.prompt(session, "hello there"))
        await wait_for(lambda: "session/prompt" in agent.wire.outgoing_methods.values())
        await agent.conn.cancel(session_id=session)
        assert (await task).stop_reason == "cancelled"
        assert not model_requests()  # cancelled before the first model call

        agent.client.answers = [None]  # /rewind alone: dismissed, so it lists the prompts
        await agent.prompt(session, "/rewind")
        said = agent.client.of(S.AgentMessageChunk, session)[-1].content.text
        assert said.endswith("1. hello there")
        listed = (await agent.conn.list_sessions()).sessions
        assert [s.title for s in listed] == ["hello there"]
        assert (await agent.prompt(session, "again")).stop_reason == "end_turn"
        seen = [m["content"] for m in model_requests()[-1]["messages"] if m["type"] == "human"]
        assert seen[-2:] == ["hello there", "again"]
        assert_history_valid(model_requests()[-1])

    async with agent_factory([], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        users = [u.content.text for u in agent.client.of(S.UserMessageChunk, session)]
        assert users == ["hello there", "again"]
