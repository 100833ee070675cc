"""Saved replays across a kill of the server."""

from __future__ import annotations

from tests.inprocess.test_acp_replay import saved_replay


async def test_a_replay_saved_before_more_turns_is_not_shown(agent_factory, tmp_path) -> None:
    """A saved replay is for its checkpoint only: after another turn (in a process killed
    before it could save again) the load reads the new turn from the checkpoints."""
    home = tmp_path / "home"
    async with agent_factory([{"content": "first answer"}], home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "one")
    assert saved_replay(home, session).is_file()
    async with agent_factory([{"content": "second answer"}], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        await agent.prompt(session, "two")
        agent.process.kill()
        await agent.process.wait()
        agent.wire.incoming.clear()
    async with agent_factory([], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        assert agent.client.text() == "first answersecond answer"
