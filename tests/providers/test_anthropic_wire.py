"""The real ChatAnthropic against the local Messages API: streaming, tools, thinking, usage,
errors and retries, as a user of the client library sees them."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from tests.providers.clients import collect, failed_once, read_file, streamed_answer
from tests.providers.wire import Failure, Reply, ToolCall

THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 4096}


async def test_text_streams_in_several_chunks(anthropic_server, claude):
    await streamed_answer(anthropic_server, claude())
    request = anthropic_server.model_requests()[0]
    assert request.body["stream"] is True
    assert request.headers["authorization"] == "Bearer test"  # this SDK sends bearer auth
    assert request.headers["anthropic-version"]


def test_invoke_without_streaming_gets_the_whole_message(anthropic_server, claude):
    anthropic_server.add(Reply(text="Hello."))
    message = claude().invoke("Hi")
    assert message.text == "Hello."
    assert "stream" not in anthropic_server.model_requests()[0].body
    assert message.usage_metadata["output_tokens"] > 0


async def test_streamed_tool_call_is_parsed_and_its_result_is_accepted(anthropic_server, claude):
    anthropic_server.add(
        Reply(
            text="Reading it.", tool_calls=[ToolCall("read_file", {"path": "src/app.py"})], chunk=4
        ),
        Reply(text="It defines main()."),
    )
    model = claude().bind_tools([read_file])
    history = [HumanMessage("What is in src/app.py?")]
    first = await collect(model, history)
    assert first.tool_calls == [
        {
            "name": "read_file",
            "args": {"path": "src/app.py"},
            "id": first.tool_calls[0]["id"],
            "type": "tool_call",
        }
    ]
    assert first.response_metadata["stop_reason"] == "tool_use"
    history += [first, ToolMessage("def main(): ...", tool_call_id=first.tool_calls[0]["id"])]
    second = await collect(model, history)
    assert second.text == "It defines main()."
    sent = anthropic_server.model_requests()[1]
    assert sent.status == 200
    result = sent.body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == first.tool_calls[0]["id"]


async def test_parallel_tool_results_go_back_in_one_user_turn(anthropic_server, claude):
    calls = [ToolCall("read_file", {"path": "a.py"}), ToolCall("read_file", {"path": "b.py"})]
    anthropic_server.add(Reply(tool_calls=calls), Reply(text="Both read."))
    model = claude().bind_tools([read_file])
    first = await collect(model, [HumanMessage("Read a.py and b.py")])
    assert [c["args"]["path"] for c in first.tool_calls] == ["a.py", "b.py"]
    results = [ToolMessage("x", tool_call_id=c["id"]) for c in first.tool_calls]
    second = await collect(model, [HumanMessage("Read a.py and b.py"), first, *results])
    assert second.text == "Both read."


async def test_thinking_and_its_signature_survive_a_tool_call(anthropic_server, claude):
    anthropic_server.add(
        Reply(
            thinking="The user wants the file; read it first.",
            tool_calls=[ToolCall("read_file", {"path": "a.py"})],
        ),
        Reply(thinking="Now answer.", text="Done."),
    )
    model = claude(**THINKING).bind_tools([read_file])
    history = [HumanMessage("Read a.py")]
    first = await collect(model, history)
    thinking = [b for b in first.content if b["type"] == "thinking"]
    assert thinking and thinking[0]["thinking"] == "The user wants the file; read it first."
    history += [first, ToolMessage("x", tool_call_id=first.tool_calls[0]["id"])]
    second = await collect(model, history)
    assert second.text == "Done."
    sent = anthropic_server.model_requests()[1].body["messages"][1]["content"][0]
    assert sent["type"] == "thinking"
    assert anthropic_server.signer.verify(sent["thinking"], sent["signature"])


async def test_redacted_thinking_goes_back_opaque(anthropic_server, claude):
    anthropic_server.add(
        Reply(
            thinking="visible part",
            redacted_thinking=True,
            tool_calls=[ToolCall("read_file", {"path": "a.py"})],
        ),
        Reply(text="ok"),
    )
    model = claude(**THINKING).bind_tools([read_file])
    first = await collect(model, [HumanMessage("Read a.py")])
    history = [
        HumanMessage("Read a.py"),
        first,
        ToolMessage("x", tool_call_id=first.tool_calls[0]["id"]),
    ]
    assert (await collect(model, history)).text == "ok"
    kinds = [b["type"] for b in anthropic_server.model_requests()[1].body["messages"][1]["content"]]
    assert kinds == ["thinking", "redacted_thinking", "tool_use"]


async def test_usage_reports_cache_writes_then_reads(anthropic_server, claude):
    system = SystemMessage(
        [{"type": "text", "text": "Rules. " * 1000, "cache_control": {"type": "ephemeral"}}]
    )
    anthropic_server.add(Reply(text="one"), Reply(text="two"))
    model = claude()
    first = await collect(model, [system, HumanMessage("first question")])
    second = await collect(model, [system, HumanMessage("second question")])
    wrote, read = first.usage_metadata, second.usage_metadata
    # ChatAnthropic reports writes per lifetime (5m / 1h) when the API breaks them down.
    assert wrote["input_token_details"]["ephemeral_5m_input_tokens"] > 1024
    assert wrote["input_token_details"]["cache_read"] == 0
    assert (
        read["input_token_details"]["cache_read"]
        == wrote["input_token_details"]["ephemeral_5m_input_tokens"]
    )
    assert read["input_token_details"]["ephemeral_5m_input_tokens"] == 0
    for usage, reported in zip((wrote, read), anthropic_server.usages(), strict=True):
        uncached = reported["input_tokens"]
        assert (
            usage["input_tokens"]
            == uncached
            + reported["cache_read_input_tokens"]
            + reported["cache_creation_input_tokens"]
        )


async def test_truncated_tool_call_ends_with_max_tokens(anthropic_server, claude):
    cut = ToolCall("read_file", partial_json='{"path": "src/ap')
    anthropic_server.add(Reply(tool_calls=[cut], stop="max_tokens"))
    message = await collect(claude().bind_tools([read_file]), [HumanMessage("Read src/app.py")])
    assert message.response_metadata["stop_reason"] == "max_tokens"
    # What the harness must guard against: the client turns the cut JSON into a call anyway.
    assert message.tool_calls[0]["name"] == "read_file"


@pytest.mark.parametrize(
    ("failure", "client_error", "error_type"),
    [
        (Failure(429, retry_after=30), "RateLimitError", "rate_limit_error"),
        (Failure(529), "OverloadedError", "overloaded_error"),
        (Failure(500), "InternalServerError", "api_error"),
    ],
)
async def test_http_errors_surface_as_the_sdk_error_types(
    anthropic_server, claude, failure, client_error, error_type
):
    import anthropic  # imported where used: an SDK is a second of every collection

    raised = getattr(anthropic, client_error)
    error = await failed_once(anthropic_server, claude(), failure, raised)  # max_retries=0
    assert error.body["error"]["type"] == error_type


async def test_prompt_too_long_is_a_context_overflow(anthropic_server, claude):
    anthropic_server.context_window = 50
    with pytest.raises(ContextOverflowError) as raised:
        await collect(claude(), [HumanMessage("word " * 400)])
    assert raised.value.status_code == 400
    message = raised.value.body["error"]["message"]
    assert message.startswith("prompt is too long: ") and message.endswith(" tokens > 50 maximum")


async def test_mid_stream_error_event_raises_after_the_first_delta(anthropic_server, claude):
    anthropic_server.add(Reply(text="partial answer", stream_error="overloaded_error"))
    import anthropic

    seen = []
    with pytest.raises(anthropic.APIStatusError) as raised:
        async for chunk in claude().astream("hi"):
            seen.append(chunk.text)
    assert "".join(seen) == "partial "
    assert raised.value.body["error"]["type"] == "overloaded_error"


def test_the_sdk_waits_for_retry_after_and_the_server_counts_both_requests(
    anthropic_server, claude
):
    anthropic_server.add(Failure(429, retry_after=1), Reply(text="after the wait"))
    message = claude(max_retries=1).invoke("hi")
    assert message.text == "after the wait"
    first, second = anthropic_server.model_requests()
    assert first.status == 429 and second.status == 200
    assert second.at - first.at >= 1.0  # the SDK's own backoff would be about 0.5 s


def test_count_tokens_endpoint(anthropic_server, claude):
    assert claude().get_num_tokens_from_messages([HumanMessage("a" * 400)]) > 100


async def test_a_client_that_stops_reading_mid_stream_is_seen_as_gone(anthropic_server, claude):
    anthropic_server.add(Reply(text="a long answer " * 20, chunk=4, delay=0.02))
    async for chunk in claude().astream("hi"):
        if chunk.text:
            break  # what cancelling a turn does to the stream
    request = anthropic_server.model_requests()[0]
    for _ in range(500):
        if request.disconnected:
            break
        await asyncio.sleep(0.01)
    assert request.disconnected
