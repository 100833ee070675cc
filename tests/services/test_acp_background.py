"""Background tasks on a LangGraph server (`langgraph dev`): queued updates, cancel, and a
restart of `deepacp --stdio` after kill -9."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal

import pytest

from tests.inprocess.test_acp_background import (
    BRIEF,
    MARK,
    START,
    call,
    check,
    child,
    plans,
    set_mode,
    task_run_ended,
    until,
)
from tests.support.waits import marked, marked_pids


@pytest.mark.e2e  # kills the binary
async def test_a_task_on_the_server_is_seen_finished_after_a_restart(
    agent_factory, langgraph_server, tmp_path
) -> None:
    turns = [
        *START,
        child(call("read_file", "r1", file_path="a.py")),
        child({"content": "On the server, a.py sets x = 1."}),
        check(),
        {"content": "It finished."},
    ]
    with langgraph_server(turns) as server:
        (server.workspace / "a.py").write_text("x = 1\n")
        remote = {
            "workspace": server.workspace,
            "args": ("--server", server.url),
            "env": {"DEEPACP_MODEL": "", **server.env},  # the server's model is the one that runs
            "home": tmp_path / "client-home",
        }
        async with agent_factory([], **remote) as agent:
            session = await agent.new_session()
            assert (await agent.prompt(session, "start it")).stop_reason == "end_turn"
            started = agent.client.cards()["s1"]["content"][-1].content.text
            assert started.startswith("Started background task bg-s1:")
            agent.process.send_signal(signal.SIGKILL)
            await agent.process.wait()
            agent.wire.incoming.clear()  # the killed connection may have half-read frames
        # The task goes on on the server while no deepacp runs.
        while not await task_run_ended(server, "bg-s1"):
            await asyncio.sleep(0.1)

        async with agent_factory([], **remote) as agent:
            await agent.conn.load_session(
                cwd=str(server.workspace), session_id=session, mcp_servers=[]
            )
            assert (await agent.prompt(session, "check it")).stop_reason == "end_turn"
            report = agent.client.cards()["k1"]["content"][-1].content.text
            assert report.startswith("Background task bg-s1 finished.")
            assert "On the server, a.py sets x = 1." in report
            assert agent.client.text().endswith("It finished.")
            assert plans(agent)[-1] == [f"Background: {BRIEF} (finished)"]


async def test_on_the_server_an_update_waits_in_line_and_cancel_stops_it_all(
    agent_factory, langgraph_server, tmp_path
) -> None:
    served = tmp_path / "served.jsonl"
    turns = [
        *START,
        child(call("execute", "x1", command=marked("sleep 20", f"{MARK}-server"))),
        child({"content": "never reached: it is cancelled first"}),
        call("update_background_task", "u1", task_id="bg-s1", message="also PING"),
        {"content": "Sent."},
        call("cancel_background_task", "c1", task_id="bg-s1"),
        check(),
        {"content": "Cancelled."},
    ]
    with langgraph_server(turns, record=str(served)) as server:
        remote = {
            "workspace": server.workspace,
            "args": ("--server", server.url),
            "env": {"DEEPACP_MODEL": "", **server.env},
        }
        async with agent_factory([], **remote) as agent:
            session = await agent.new_session()
            await set_mode(agent, session, "yolo")  # the task runs its command unasked
            await agent.prompt(session, "start it")
            await until(lambda: bool(marked_pids(f"{MARK}-server")))
            await agent.prompt(session, "tell it")
            sent = agent.client.cards()["u1"]["content"][-1].content.text
            assert sent.startswith("Sent to background task bg-s1")
            await agent.prompt(session, "stop it")
            cards = agent.client.cards()
            assert cards["c1"]["content"][-1].content.text == "Cancelled background task bg-s1."
            assert cards["k1"]["content"][-1].content.text == "Background task bg-s1 cancelled."
            assert plans(agent)[-1] == [f"Background: {BRIEF} (cancelled)"]
        assert await task_run_ended(server, "bg-s1")
        requests = [json.loads(line) for line in served.read_text().splitlines()]
        tasks = [r for r in requests if r["messages"][0]["content"] == BRIEF]
        assert tasks and not any("also PING" in json.dumps(r) for r in tasks)  # never ran
    for pid in marked_pids(f"{MARK}-server"):  # a command the server's cancel left running
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
