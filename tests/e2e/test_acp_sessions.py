"""Sessions across a kill -9 of the server."""

from __future__ import annotations

import signal

from acp import schema as S

from tests.inprocess.test_acp_sessions import TWO_TURNS


async def test_load_after_the_server_was_killed_replays_everything(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    async with agent_factory(TWO_TURNS, home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "write hello")
        agent.process.send_signal(signal.SIGKILL)
        await agent.process.wait()
        agent.wire.incoming.clear()  # the killed connection may have half-read frames

    async with agent_factory([{"content": "still here"}], home=home) as agent:
        listed = await agent.conn.list_sessions(cwd=str(agent.workspace))
        assert [s.session_id for s in listed.sessions] == [session]
        assert listed.sessions[0].title == "write hello"
        assert listed.sessions[0].updated_at

        response = await agent.conn.load_session(
            cwd=str(agent.workspace), session_id=session, mcp_servers=[]
        )
        assert response.modes.current_mode_id == "ask"
        client = agent.client
        users = [u.content.text for u in client.of(S.UserMessageChunk)]
        assert users == ["write hello"]
        assert "".join(u.content.text for u in client.of(S.AgentThoughtChunk)) == "first thoughts"
        assert client.text() == "I will write it.Wrote hello.txt."
        card = client.cards()["w1"]
        assert card["statuses"] == ["pending", "completed"]
        diff = next(c for c in card["content"] if isinstance(c, S.FileEditToolCallContent))
        assert diff.old_text is None and diff.new_text == "hi\n"
        # The history arrived before the response; the session keeps working.
        assert (await agent.prompt(session, "still there?")).stop_reason == "end_turn"
        assert client.text().endswith("still here")
