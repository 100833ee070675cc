"""Cancel: immediate, kills what runs, leaves a valid history, and the next turn works."""

from __future__ import annotations

import asyncio
import time
import uuid

from acp import schema as S

from tests.support.turns import call, calls, write
from tests.support.waits import assert_history_valid, marked, marked_pids, wait_for


async def cancelled_at_once(agent, session: str, turn: asyncio.Task) -> None:
    """Cancel `session`'s running `turn`: it answers `cancelled` within a second."""
    started = time.monotonic()
    await agent.conn.cancel(session_id=session)
    response = await turn
    elapsed = time.monotonic() - started
    assert response.stop_reason == "cancelled"
    assert elapsed < 1.0, elapsed


async def test_cancel_during_model_stream(agent_factory, model_requests) -> None:
    turns = [{"content": "word " * 400, "delay_ms": 20}, {"content": "fresh answer"}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        task = asyncio.create_task(agent.prompt(session, "talk a lot"))
        await wait_for(lambda: len(agent.client.of(S.AgentMessageChunk)) >= 3)
        await cancelled_at_once(agent, session, task)
        response = await agent.prompt(session, "again")
        assert response.stop_reason == "end_turn"
        assert agent.client.text().endswith("fresh answer")
        assert_history_valid(model_requests()[-1])


async def test_cancel_during_a_running_command(agent_factory, model_requests) -> None:
    mark = uuid.uuid4().hex
    turns = [
        calls(
            call("quick", "read_file", file_path="notes.txt"),
            call("slow", "execute", command=marked("sleep 30", mark)),
        ),
        {"content": "after the cancel"},
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "notes.txt").write_text("remember me\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        task = asyncio.create_task(agent.prompt(session, "run it"))
        await wait_for(lambda: marked_pids(mark))
        await wait_for(
            lambda: agent.client.cards().get("quick", {}).get("statuses", [""])[-1] == "completed"
        )
        await cancelled_at_once(agent, session, task)
        await wait_for(lambda: not marked_pids(mark), timeout=2)
        cards = agent.client.cards()
        assert cards["slow"]["statuses"][-1] == "failed"
        assert cards["quick"]["statuses"][-1] == "completed"

        response = await agent.prompt(session, "what happened?")
        assert response.stop_reason == "end_turn"
        last = model_requests()[-1]
        assert_history_valid(last)
        results = {m["tool_call_id"]: m["content"] for m in last["messages"] if "tool_call_id" in m}
        assert "remember me" in results["quick"]  # the finished result was kept
        assert "Cancelled by the user" in results["slow"]


async def test_cancel_while_a_permission_is_pending(agent_factory, model_requests) -> None:
    turns = [write("w", "x.txt", "x"), {"content": "next turn"}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        agent.client.answers = [None]  # the client answers "cancelled", as Zed does on stop
        response = await agent.prompt(session, "write")
        assert response.stop_reason == "cancelled"
        assert not (agent.workspace / "x.txt").exists()
        assert agent.client.cards()["w"]["statuses"][-1] == "failed"
        assert (await agent.prompt(session, "go on")).stop_reason == "end_turn"
        assert_history_valid(model_requests()[-1])


async def prompts_sent(agent, count: int) -> None:
    """Wait until the client has written `count` `session/prompt`s (a cancel sent before
    the last would cancel nothing)."""
    await wait_for(
        lambda: list(agent.wire.outgoing_methods.values()).count("session/prompt") >= count
    )


async def test_cancel_as_the_first_turn_starts(agent_factory, model_requests) -> None:
    # Right behind the first prompt of a fresh process: the harness is still loading and
    # the model has not been called (the benchmark times it: benchmarks/acp_latency.py).
    async with agent_factory([{"content": "a later answer"}]) as agent:
        session = await agent.new_session()
        task = asyncio.create_task(agent.prompt(session, "hello"))
        await prompts_sent(agent, 1)
        await agent.conn.cancel(session_id=session)
        assert (await task).stop_reason == "cancelled"
        assert not model_requests()
        assert (await agent.prompt(session, "again")).stop_reason == "end_turn"
        assert agent.client.text().endswith("a later answer")
        assert_history_valid(model_requests()[-1])


async def test_cancel_while_a_session_builds_its_agent(agent_factory, model_requests) -> None:
    # The harness is loaded (a first session ran a turn); a new session's first prompt
    # builds its agent (and its own scripted model), and the cancel lands then.
    async with agent_factory([{"content": "an answer"}]) as agent:
        assert (await agent.prompt(await agent.new_session(), "warm up")).stop_reason == "end_turn"
        session = await agent.new_session()
        task = asyncio.create_task(agent.prompt(session, "hello"))
        await prompts_sent(agent, 2)
        await agent.conn.cancel(session_id=session)
        assert (await task).stop_reason == "cancelled"
        assert len(model_requests()) == 1
        assert (await agent.prompt(session, "again")).stop_reason == "end_turn"
        assert agent.client.text(session) == "an answer"
        assert_history_valid(model_requests()[-1])
