"""Retries through the whole stack: `deepacp --stdio` on the real provider clients, against
local servers that fail the way providers do. The server counts every request it got, so
the SDK's own retries cannot hide behind ours."""

from __future__ import annotations

import asyncio

import pytest
from acp.exceptions import RequestError

from tests.providers.wire import Drop, Failure, Reply
from tests.support.providers import provider_agent
from tests.support.waits import wait_for


def notices(agent) -> list[str]:
    return [line for line in agent.client.text().splitlines() if line.startswith("provider ")]


async def test_overload_and_rate_limit_are_retried_with_a_notice(tmp_path, anthropic_server):
    anthropic_server.add(Failure(529), Failure(429, retry_after=0.3), Reply(text="Back."))
    async with provider_agent(tmp_path, "anthropic", anthropic_server) as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "hello")
        assert response.stop_reason == "end_turn"
        shown = notices(agent)
    assert len(shown) == 2
    assert shown[0].startswith("provider overloaded, retrying in 0.") and shown[0].endswith(", 2/5")
    assert shown[1] == "provider rate limited, retrying in 0.3 s, 3/5"
    assert agent.client.text().endswith("Back.")
    first, second, third = anthropic_server.model_requests()  # exactly three: no SDK retries
    assert (first.status, second.status, third.status) == (529, 429, 200)
    assert third.at - second.at >= 0.3  # the retry-after was honoured


async def test_after_the_last_try_the_turn_fails_in_one_line_and_the_next_one_works(
    tmp_path, anthropic_server
):
    config = "[retry]\nattempts = 3\ninitial_delay = 0.05\n"
    anthropic_server.add(Failure(500), Failure(500), Failure(500), Reply(text="Working again."))
    async with provider_agent(tmp_path, "anthropic", anthropic_server, config=config) as agent:
        session = await agent.new_session()
        with pytest.raises(RequestError) as raised:
            await agent.prompt(session, "hello")
        assert raised.value.code == -32603
        assert str(raised.value) == (
            "Internal error: the model provider is still failing (HTTP 500 api_error) after "
            "3 tries; try again later"
        )
        assert len(notices(agent)) == 2
        response = await agent.prompt(session, "and now?")
        assert response.stop_reason == "end_turn"
        assert agent.client.text().endswith("Working again.")
    assert [r.status for r in anthropic_server.model_requests()] == [500, 500, 500, 200]
    sent = anthropic_server.model_requests()[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]  # the failed prompt and the new one, merged


async def test_cancel_during_the_wait_stops_the_turn_and_sends_nothing_more(
    tmp_path, anthropic_server
):
    config = "[retry]\nattempts = 5\ninitial_delay = 60\nmax_delay = 120\n"
    anthropic_server.add(Failure(529), Reply(text="After the cancel."))
    async with provider_agent(tmp_path, "anthropic", anthropic_server, config=config) as agent:
        session = await agent.new_session()
        turn = asyncio.create_task(agent.prompt(session, "hello"))
        await wait_for(lambda: notices(agent), timeout=30)
        await agent.conn.cancel(session_id=session)
        response = await asyncio.wait_for(turn, 20)
        assert response.stop_reason == "cancelled"
        assert len(anthropic_server.model_requests()) == 1
        again = await agent.prompt(session, "try again")
        assert again.stop_reason == "end_turn"
        assert agent.client.text().endswith("After the cancel.")
    assert len(anthropic_server.model_requests()) == 2


async def test_a_dropped_connection_and_a_mid_stream_error_are_retried(tmp_path, anthropic_server):
    anthropic_server.add(
        Drop(), Reply(text="half of it", stream_error="overloaded_error"), Reply(text="All of it.")
    )
    async with provider_agent(tmp_path, "anthropic", anthropic_server) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "hello")).stop_reason == "end_turn"
        shown = notices(agent)
    assert [s.split(",")[0] for s in shown] == ["provider unreachable", "provider overloaded"]
    assert agent.client.text().endswith("All of it.")
    assert len(anthropic_server.model_requests()) == 3


@pytest.mark.parametrize("provider", ["openai", "ollama"])
async def test_other_providers_retry_without_the_sdk_retrying_too(
    tmp_path, provider, openai_server, ollama_server
):
    server = openai_server if provider == "openai" else ollama_server
    server.add(Failure(429, retry_after=0.1), Failure(500), Reply(text="Answered."))
    async with provider_agent(tmp_path, provider, server) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "hello")).stop_reason == "end_turn"
        assert [s.split(",")[0] for s in notices(agent)] == [
            "provider rate limited",
            "provider failing",
        ]
        assert agent.client.text().endswith("Answered.")
    assert [r.status for r in server.model_requests()] == [429, 500, 200]
