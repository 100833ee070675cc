"""session/list leads with the sessions that got a prompt."""

from __future__ import annotations


async def test_sessions_without_a_prompt_are_listed_last(agent_factory) -> None:
    async with agent_factory([{"content": "done"}]) as agent:
        worked = await agent.new_session()
        await agent.prompt(worked, "real work")
        opened = [await agent.new_session() for _ in range(2)]  # chats a client opened, unused
        await agent.prompt(opened[0], "/goal")  # a command alone is no prompt either
        for cwd in (None, str(agent.workspace)):
            listed = (await agent.conn.list_sessions(cwd=cwd)).sessions
            assert listed[0].session_id == worked
            assert {s.session_id for s in listed[1:]} == set(opened)
            assert [s.title for s in listed] == ["real work", None, None]
