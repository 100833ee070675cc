"""Saved replays across a kill of the server."""

from __future__ import annotations

from tests.inprocess.test_acp_replay import WITH_DIFF, load_lines, saved_replay
from tests.support.waits import wait_for


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


async def test_a_replay_is_saved_as_its_turn_ends(agent_factory, tmp_path) -> None:
    """Not only as the session closes: an editor that quits may end the process first
    (the SDK's client sends SIGTERM 2 s after it closes the input), here with kill -9."""
    home = tmp_path / "home"
    async with agent_factory(WITH_DIFF, home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "go")
        await wait_for(lambda: saved_replay(home, session).is_file())
        agent.process.kill()
        await agent.process.wait()
    saved = saved_replay(home, session).stat()
    async with agent_factory([], home=home) as agent:
        from_saved = await load_lines(agent, session)
    again = saved_replay(home, session).stat()
    assert (again.st_ino, again.st_mtime_ns) == (saved.st_ino, saved.st_mtime_ns)  # current
    saved_replay(home, session).unlink()
    async with agent_factory([], home=home) as agent:
        assert await load_lines(agent, session) == from_saved
