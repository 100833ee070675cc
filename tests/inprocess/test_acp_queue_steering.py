"""A prompt that arrives while a turn runs: queued by default (acknowledged, run when the
turn ends, cancelled with it), or steered into the running turn with `_session/steering`
(it joins at the next model call; the work in flight goes on)."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError
from acp import schema as S

from deepacp.session.core import QUEUED
from tests.support.turns import write
from tests.support.waits import wait_for

SLOW = {"content": "word " * 200, "delay_ms": 20}
FIRST_WORDS = 30.0
"""Seconds to wait for a turn's first words (the first turn builds the agent; CI is loaded)."""
STEERING = "_session/steering"
STEERED = "wrote a.txt, and noted the steer"


def steer(session: str, text: str, **meta) -> dict:
    params: dict = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    if meta:
        params["_meta"] = {"steering": meta}
    return params


async def talking(agent, prompt: str) -> tuple[str, asyncio.Task]:
    """A new session and its turn for `prompt`, once that turn has streamed its first words."""
    session = await agent.new_session()
    turn = asyncio.create_task(agent.prompt(session, prompt))
    await wait_for(lambda: len(agent.client.of(S.AgentMessageChunk)) >= 3, FIRST_WORDS)
    return session, turn


def humans(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["type"] == "human"]


async def test_a_prompt_sent_during_a_turn_is_queued_and_runs_after_it(
    agent_factory, model_requests
) -> None:
    async with agent_factory([SLOW, {"content": "second answer"}]) as agent:
        session, first = await talking(agent, "first")
        second = asyncio.create_task(agent.prompt(session, "second"))
        await wait_for(lambda: QUEUED in agent.client.text())  # acknowledged at once
        assert not second.done() and len(model_requests()) == 1
        done, _ = await asyncio.wait({first, second}, return_when=asyncio.FIRST_COMPLETED)
        assert done == {first}  # the running turn answers first
        assert first.result().stop_reason == "end_turn"
        assert (await second).stop_reason == "end_turn"
        later = model_requests()[1]
        assert humans(later) == ["first", "second"]  # after the first turn, not beside it
        assert "word word" in later["messages"][1]["content"]


async def test_cancel_stops_the_turn_and_answers_the_queued_prompts_cancelled(
    agent_factory, model_requests
) -> None:
    turns = [{"content": "word " * 400, "delay_ms": 20}, {"content": "after the cancel"}]
    async with agent_factory(turns) as agent:
        session, running = await talking(agent, "talk")
        queued = [asyncio.create_task(agent.prompt(session, f"then {n}")) for n in range(2)]
        await wait_for(lambda: agent.client.text().count(QUEUED) == 2)
        await agent.conn.cancel(session_id=session)
        answers = await asyncio.wait_for(asyncio.gather(running, *queued), 5)
        assert [a.stop_reason for a in answers] == ["cancelled"] * 3
        assert len(model_requests()) == 1  # the queued prompts never ran
        assert (await agent.prompt(session, "again")).stop_reason == "end_turn"
        assert humans(model_requests()[-1])[-1] == "again"


async def test_a_steered_message_joins_the_running_turn_at_its_next_model_call(
    agent_factory, model_requests
) -> None:
    async with agent_factory([write("w", "a.txt", "a\n"), {"content": STEERED}]) as agent:
        session = await agent.new_session()
        answers: list = []

        async def steer_while_asked(request) -> None:  # the turn is busy asking
            answers.append(await agent.raw_request(STEERING, steer(session, "also say hi")))

        agent.client.on_permission = steer_while_asked
        response = await agent.prompt(session, "write a")
        assert answers == [{"outcome": "injected"}]
        assert response.stop_reason == "end_turn"
        assert (agent.workspace / "a.txt").read_text() == "a\n"  # the work went on
        second = model_requests()[1]
        assert [m["type"] for m in second["messages"]][-2:] == ["tool", "human"]
        assert second["messages"][-2]["status"] == "success"
        assert humans(second) == ["write a", "also say hi"]
        assert len(model_requests()) == 2  # it joined the turn: no extra one


async def test_a_message_steered_as_the_model_finishes_continues_the_same_turn(
    agent_factory, model_requests
) -> None:
    async with agent_factory([SLOW, {"content": "and hi"}]) as agent:
        session, turn = await talking(agent, "talk")
        answer = await agent.raw_request(STEERING, steer(session, "say hi too"))
        assert answer == {"outcome": "injected"}
        assert (await turn).stop_reason == "end_turn"
        assert agent.client.text().endswith("and hi")
        assert humans(model_requests()[-1]) == ["talk", "say hi too"]


async def test_steering_with_no_turn_running(agent_factory, model_requests) -> None:
    async with agent_factory([{"content": "started by a steer"}]) as agent:
        assert agent.info.field_meta == {"steering": {"supported": True}}
        session = await agent.new_session()
        answer = await agent.raw_request(
            STEERING, steer(session, "hello", idleBehavior="promptRequired")
        )
        assert answer == {"outcome": "promptRequired", "reason": "noRunningTurn"}
        assert model_requests() == []  # left to the client
        answer = await agent.raw_request(STEERING, steer(session, "hello"))
        assert answer == {"outcome": "startedNewTurn"}
        await wait_for(lambda: agent.client.text().endswith("started by a steer"), FIRST_WORDS)
        assert humans(model_requests()[0]) == ["hello"]
        with pytest.raises(RequestError) as bad:
            await agent.raw_request(STEERING, {"sessionId": session, "prompt": []})
        assert bad.value.code == -32602 and "non-empty prompt" in str(bad.value)


async def test_a_second_steer_right_after_one_that_started_a_turn_joins_it(
    agent_factory, model_requests
) -> None:
    async with agent_factory([{"content": "one turn for both"}]) as agent:
        session = await agent.new_session()
        first = await agent.raw_request(STEERING, steer(session, "first"))
        second = await agent.raw_request(STEERING, steer(session, "second"))
        assert [first, second] == [{"outcome": "startedNewTurn"}, {"outcome": "injected"}]
        await wait_for(lambda: agent.client.text().endswith("one turn for both"), FIRST_WORDS)
        assert [humans(r) for r in model_requests()] == [["first", "second"]]
