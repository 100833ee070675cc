"""Background tasks across a kill -9 of `deepacp --stdio`: what a restart finds."""

from __future__ import annotations

import contextlib
import os
import signal

from tests.inprocess import test_acp_background as bg


async def test_a_task_running_when_deepacp_was_killed_is_lost_after_a_restart(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    slow = [*bg.START, bg.child(bg.call("execute", "x1", command=bg.SLOW))]
    async with agent_factory(slow, home=home) as agent:
        session = await agent.new_session()
        await bg.set_mode(agent, session, "yolo")
        await agent.prompt(session, "start it")
        agent.process.send_signal(signal.SIGKILL)
        await agent.process.wait()
        agent.wire.incoming.clear()  # the killed connection may have half-read frames
    for pid in bg.slow_commands():  # the killed process's command, if it had started
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    async with agent_factory([bg.check(), {"content": "It was lost."}], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        assert bg.plans(agent)[-1] == [f"Background: {bg.BRIEF} (lost)"]
        await agent.prompt(session, "check it")
        text = agent.client.cards()["k1"]["content"][-1].content.text
        assert text.startswith("Background task bg-s1 is lost.") and "start it again" in text
