"""`deepacp --stdio --server URL` against a real `langgraph dev`: the harness runs on the
server (its model, its files), the editor sees the same cards, diffs and permission prompts as
in-process, and a server that cannot be reached is one clear error at session/new."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import uuid

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.acp import DEEPACP
from tests.support.langgraph import free_port
from tests.support.turns import call, calls, edit
from tests.support.waits import assert_history_valid, marked, marked_pids, wait_for

READ_EDIT_RUN = [
    calls(call("read1", "read_file", file_path="a.py")),
    edit("edit1", "a.py", "x = 1", "x = 2", said="Changing x."),
    calls(call("run1", "execute", command="python3 a.py")),
    {"content": "All done."},
]
# The client knows no model: the server's (its DEEPACP_MODEL) is the one that runs.
NO_CLIENT_MODEL = {"DEEPACP_MODEL": ""}


def on_server(agent_factory, server):
    """`deepacp --stdio --server URL` on `server`'s workspace, knowing no model of its own."""
    return agent_factory(
        [],
        workspace=server.workspace,
        args=("--server", server.url),
        env=NO_CLIENT_MODEL | server.env,
    )


async def test_a_full_turn_runs_on_the_server(agent_factory, langgraph_server) -> None:
    with langgraph_server(READ_EDIT_RUN) as server:
        target = server.workspace / "a.py"
        target.write_text("import sys\nx = 1\nprint(x)\n")
        async with on_server(agent_factory, server) as agent:
            session = await agent.new_session()
            agent.client.answers = ["allow_once", "allow_once"]
            response = await agent.prompt(session, "bump x")

            assert response.stop_reason == "end_turn"
            assert target.read_text() == "import sys\nx = 2\nprint(x)\n"
            client = agent.client
            assert "Changing x." in client.text() and client.text().endswith("All done.")
            asked = [r.tool_call.tool_call_id for r in client.permission_requests]
            assert asked == ["edit1", "run1"]

            cards = client.cards()
            read, edit, run = cards["read1"], cards["edit1"], cards["run1"]
            assert read["kind"] == "read" and read["statuses"][-1] == "completed"
            assert "x = 1" in read["content"][-1].content.text
            assert edit["title"] == "Edit a.py" and edit["statuses"][-1] == "completed"
            diff = next(c for c in edit["content"] if isinstance(c, S.FileEditToolCallContent))
            assert diff.path == str(target)
            assert diff.old_text == "import sys\nx = 1\nprint(x)\n"
            assert diff.new_text == "import sys\nx = 2\nprint(x)\n"
            assert run["kind"] == "execute" and run["statuses"][-1] == "completed"
            assert "2\n[exit code 0]" in run["content"][-1].content.text

            # The conversation is the server's thread: a load replays it from there.
            before = len(client.updates)
            await agent.conn.load_session(cwd=str(server.workspace), session_id=session)
            replayed = [u for _, u in client.updates[before:]]
            shown = "".join(u.content.text for u in replayed if isinstance(u, S.AgentMessageChunk))
            assert "All done." in shown, [type(u).__name__ for u in replayed]


@pytest.mark.e2e
async def test_a_server_that_is_down_is_one_error_at_session_new(agent_factory) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    async with agent_factory([], args=("--server", url), env=NO_CLIENT_MODEL) as agent:
        with pytest.raises(RequestError) as info:
            await agent.new_session()
        message = str(info.value)
        assert "not reachable" in message and url in message and "\n" not in message
        listed = await agent.conn.list_sessions()
        assert listed.sessions == []  # nothing half-made is left behind
        began = time.monotonic()  # the harness is loaded now: this is the server's time
        with pytest.raises(RequestError):  # and the agent still answers
            await agent.new_session()
        # Told at once: with langgraph-sdk's five connection retries a call slept 7.5 s
        # before its error; with two, 0.5 s.
        assert time.monotonic() - began < 5.0


async def test_cancel_cancels_the_server_run_and_the_thread_goes_on(
    agent_factory, langgraph_server, tmp_path
) -> None:
    mark = uuid.uuid4().hex
    slow = {"id": "slow", "name": "execute", "args": {"command": marked("sleep 8", mark)}}
    turns = [{"tool_calls": [slow]}, {"content": "after the cancel"}]
    requests = tmp_path / "server-requests.jsonl"
    with langgraph_server(turns, record=str(requests)) as server:
        async with on_server(agent_factory, server) as agent:
            session = await agent.new_session()
            await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
            task = asyncio.create_task(agent.prompt(session, "run it"))
            await wait_for(lambda: marked_pids(mark), timeout=30)
            await wait_for(lambda: "slow" in agent.client.cards(), timeout=30)
            await agent.conn.cancel(session_id=session)
            assert (await task).stop_reason == "cancelled"
            assert agent.client.cards()["slow"]["statuses"][-1] == "failed"

            response = await agent.prompt(session, "what happened?")
            assert response.stop_reason == "end_turn"
            assert agent.client.text().endswith("after the cancel")
            last = json.loads(requests.read_text().splitlines()[-1])
            assert_history_valid(last)  # the cancelled call was answered on the server's thread
            answers = [m["content"] for m in last["messages"] if m.get("tool_call_id") == "slow"]
            assert "Cancelled by the user" in answers[0]
        # langgraph dev stops a cancelled run's task only when its loop next wakes, so the
        # command may finish its sleep (docs/scaling-out.md); nothing of it outlives that.
        await wait_for(lambda: not marked_pids(mark), timeout=30)


def test_a_headless_run_on_the_server_edits_its_file(langgraph_server, tmp_path) -> None:
    edit = READ_EDIT_RUN[1]
    with langgraph_server([edit, {"content": "Done."}]) as server:
        target = server.workspace / "a.py"
        target.write_text("x = 1\n")
        result = subprocess.run(
            [DEEPACP, "run", "--server", server.url, "--mode", "yolo", "bump x"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=server.workspace,
            env={**os.environ, "DEEPACP_HOME": str(tmp_path / "client-home"), **server.env},
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 0, result.stderr
        assert "-x = 1\n+x = 2" in result.stdout and "Done." in result.stdout
        assert target.read_text() == "x = 2\n"


async def test_a_server_gone_mid_session_is_one_error_at_the_prompt(
    agent_factory, langgraph_server
) -> None:
    with langgraph_server([{"content": "never said"}]) as server:
        async with on_server(agent_factory, server) as agent:
            session = await agent.new_session()
            server.stop()
            with pytest.raises(RequestError) as info:
                await agent.prompt(session, "hello?")
            assert "not reachable" in str(info.value) and "\n" not in str(info.value)
            listed = await agent.conn.list_sessions()
            assert [s.session_id for s in listed.sessions] == [session]  # kept, to resume later
