"""Output limits and odd replies through the whole stack on the real provider clients: a
tool call cut off by max_tokens never runs, a reply that is only thinking does not poison
the history, and a provider's context-overflow error triggers summarize-and-retry."""

from __future__ import annotations

import pytest

from tests.providers.wire import Reply, ToolCall
from tests.support.providers import provider_agent

CUT = '{"file_path": "app.py", "content": "def main():\\n    return comp'


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_tool_call_cut_off_by_max_tokens_is_never_run(
    tmp_path, provider, anthropic_server, openai_server
):
    server = anthropic_server if provider == "anthropic" else openai_server
    server.add(
        Reply(
            text="Writing it.",
            tool_calls=[ToolCall("write_file", partial_json=CUT)],
            stop="max_tokens",
        ),
        Reply(text="It was cut off; I will write it in parts."),
    )
    async with provider_agent(tmp_path, provider, server) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        response = await agent.prompt(session, "write app.py")
        assert response.stop_reason == "end_turn"
        assert not (agent.workspace / "app.py").exists()
        assert not agent.client.permission_requests
        (card,) = agent.client.cards().values()
        assert card["statuses"][-1] == "failed"
    _, second = server.model_requests()
    assert second.status == 200  # the provider accepted the history with the cut-off call
    sent = str(second.body)
    assert "output token limit" in sent


async def test_cut_off_twice_running_ends_the_turn_with_max_tokens(tmp_path, anthropic_server):
    cut = [ToolCall("write_file", partial_json=CUT)]
    anthropic_server.add(
        Reply(tool_calls=cut, stop="max_tokens"),
        Reply(tool_calls=[ToolCall("write_file", partial_json=CUT)], stop="max_tokens"),
        Reply(text="Fine."),
    )
    async with provider_agent(tmp_path, "anthropic", anthropic_server) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert (await agent.prompt(session, "write app.py")).stop_reason == "max_tokens"
        assert not (agent.workspace / "app.py").exists()
        assert (await agent.prompt(session, "never mind")).stop_reason == "end_turn"
    assert [r.status for r in anthropic_server.model_requests()] == [200, 200, 200]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
async def test_a_reply_that_is_only_thinking_does_not_poison_the_next_request(
    tmp_path, provider, anthropic_server, openai_server, ollama_server
):
    server = {"anthropic": anthropic_server, "openai": openai_server, "ollama": ollama_server}[
        provider
    ]
    server.add(Reply(thinking="Nothing worth saying."), Reply(text="Here is the answer."))
    async with provider_agent(tmp_path, provider, server) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "hmm")).stop_reason == "end_turn"
        assert (await agent.prompt(session, "so?")).stop_reason == "end_turn"
        assert agent.client.text().endswith("Here is the answer.")
    assert [r.status for r in server.model_requests()] == [200, 200]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_context_overflow_error_summarizes_and_retries(
    tmp_path, provider, anthropic_server, openai_server
):
    server = anthropic_server if provider == "anthropic" else openai_server
    big = "Here is a long log to keep in mind. " * 800  # about 7,000 tokens
    server.add(
        Reply(text="Noted."),
        Reply(text="Summary: the user shared a long log."),
        Reply(text="Still with you."),
    )
    async with provider_agent(tmp_path, provider, server) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, big)).stop_reason == "end_turn"
        first = server.model_requests()[0]
        server.context_window = len(str(first.body)) // 4 - 2_000  # the next one will not fit
        assert (await agent.prompt(session, "what next?")).stop_reason == "end_turn"
        assert agent.client.text().endswith("Still with you.")
    overflow, summary, retried = server.model_requests()[1:]
    assert overflow.status == 400 and overflow.error is not None
    assert summary.status == 200 and "Summarize the conversation" in str(summary.body)
    assert retried.status == 200
    assert big not in str(retried.body) and "<conversation_summary>" in str(retried.body)
