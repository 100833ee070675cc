"""The real ChatOpenAI against the local OpenAI API: Chat Completions streaming, tool calls
by index, usage and cached tokens, errors and retries, and when the Responses API is used."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from tests.providers.clients import collect, failed_once, read_file, streamed_answer
from tests.providers.wire import Failure, Reply, ToolCall

LONG = "Stable instructions for the agent. " * 200  # well over 1024 tokens


async def test_text_streams_in_several_chunks(openai_server, gpt):
    await streamed_answer(openai_server, gpt())
    request = openai_server.model_requests()[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test"


async def test_with_a_base_url_usage_is_streamed_only_when_asked(openai_server, gpt):
    openai_server.add(Reply(text="a"), Reply(text="b"))
    silent = await collect(gpt(), [HumanMessage("hi")])
    counted = await collect(gpt(stream_usage=True), [HumanMessage("hi")])
    first, second = openai_server.model_requests()
    assert "stream_options" not in first.body and silent.usage_metadata is None
    assert second.body["stream_options"] == {"include_usage": True}
    assert counted.usage_metadata["input_tokens"] == second.usage["prompt_tokens"]


async def test_parallel_tool_calls_are_chunked_by_index_and_answered(openai_server, gpt):
    calls = [ToolCall("read_file", {"path": "a.py"}), ToolCall("read_file", {"path": "b.py"})]
    openai_server.add(
        Reply(text="Reading both.", tool_calls=calls, chunk=4), Reply(text="Both read.")
    )
    model = gpt().bind_tools([read_file])
    history = [HumanMessage("Read a.py and b.py")]
    first = await collect(model, history)
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [
        ("read_file", {"path": "a.py"}),
        ("read_file", {"path": "b.py"}),
    ]
    assert len({c["id"] for c in first.tool_calls}) == 2
    assert first.response_metadata["finish_reason"] == "tool_calls"
    history += [first, *(ToolMessage("x", tool_call_id=c["id"]) for c in first.tool_calls)]
    assert (await collect(model, history)).text == "Both read."
    assert [m["role"] for m in openai_server.model_requests()[1].body["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
    ]


async def test_a_truncated_answer_ends_with_length(openai_server, gpt):
    openai_server.add(Reply(text="It was the best of", stop="max_tokens"))
    message = await collect(gpt(), [HumanMessage("Tell me a story")])
    assert message.response_metadata["finish_reason"] == "length"


async def test_cached_tokens_are_reported_for_a_repeated_prefix(openai_server, gpt):
    openai_server.add(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    model = gpt(stream_usage=True)
    first = await collect(model, [SystemMessage(LONG), HumanMessage("first")])
    second = await collect(model, [SystemMessage(LONG), HumanMessage("second")])
    other_key = await collect(
        model.bind(prompt_cache_key="another"), [SystemMessage(LONG), HumanMessage("third")]
    )
    assert first.usage_metadata["input_token_details"]["cache_read"] == 0
    cached = second.usage_metadata["input_token_details"]["cache_read"]
    assert cached >= 1024 and cached % 128 == 0
    assert cached <= second.usage_metadata["input_tokens"]
    assert other_key.usage_metadata["input_token_details"]["cache_read"] == 0
    assert openai_server.model_requests()[2].body["prompt_cache_key"] == "another"


@pytest.mark.parametrize(
    ("failure", "client_error", "error_type"),
    [
        (Failure(429, retry_after=20), "RateLimitError", "requests"),
        (Failure(500), "InternalServerError", "server_error"),
    ],
)
async def test_http_errors_surface_as_the_sdk_error_types(
    openai_server, gpt, failure, client_error, error_type
):
    import openai  # imported where used: an SDK is a second of every collection

    error = await failed_once(openai_server, gpt(), failure, getattr(openai, client_error))
    assert error.body["type"] == error_type


def test_the_sdk_waits_for_retry_after_and_the_server_counts_both_requests(openai_server, gpt):
    openai_server.add(Failure(429, retry_after=1), Reply(text="after the wait"))
    assert gpt(max_retries=1).invoke("hi").text == "after the wait"
    first, second = openai_server.model_requests()
    assert (first.status, second.status) == (429, 200)
    assert second.at - first.at >= 1.0


async def test_context_overflow_is_reported_as_the_api_does(openai_server, gpt):
    import openai

    openai_server.context_window = 50
    with pytest.raises(openai.BadRequestError) as raised:
        await collect(gpt(), [HumanMessage("word " * 400)])
    assert raised.value.body["code"] == "context_length_exceeded"


@pytest.mark.parametrize(
    ("model", "options", "bind", "path"),
    [
        ("gpt-4.1", {}, True, "/v1/chat/completions"),
        ("gpt-5.4", {"reasoning_effort": "low"}, True, "/v1/chat/completions"),
        ("gpt-5.4", {"reasoning": {"effort": "low"}}, False, "/v1/responses"),
        ("gpt-6", {}, True, "/v1/responses"),
        ("gpt-6", {}, False, "/v1/chat/completions"),
        ("gpt-5.4-pro", {}, False, "/v1/responses"),
    ],
)
def test_which_endpoint_chat_openai_uses(openai_server, gpt, model, options, bind, path):
    openai_server.add(Reply(text="ok"))
    chat = gpt(model=model, **options)
    (chat.bind_tools([read_file]) if bind else chat).invoke("hi")
    assert openai_server.model_requests()[0].path == path


async def test_responses_api_streams_reasoning_text_and_a_function_call(openai_server, gpt):
    openai_server.add(
        Reply(
            thinking="Look at the file first.",
            text="Reading.",
            tool_calls=[ToolCall("read_file", {"path": "a.py"})],
        ),
        Reply(text="It is short."),
    )
    model = gpt(model="gpt-5.4", reasoning={"effort": "low", "summary": "auto"}).bind_tools(
        [read_file]
    )
    history = [HumanMessage("What is in a.py?")]
    first = await collect(model, history)
    reasoning = [b for b in first.content if b["type"] == "reasoning"]
    assert reasoning[0]["summary"][0]["text"] == "Look at the file first."
    assert first.text == "Reading."
    assert first.tool_calls[0]["args"] == {"path": "a.py"}
    assert first.usage_metadata["output_token_details"]["reasoning"] > 0
    history += [first, ToolMessage("print(1)", tool_call_id=first.tool_calls[0]["id"])]
    assert (await collect(model, history)).text == "It is short."
    kinds = [item.get("type") for item in openai_server.model_requests()[1].body["input"]]
    assert kinds == ["message", "reasoning", "message", "function_call", "function_call_output"]
