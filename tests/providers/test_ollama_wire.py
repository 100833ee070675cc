"""The real ChatOllama against the local Ollama API: NDJSON streaming, tool calls, thinking,
usage counts, model checks and errors."""

from __future__ import annotations

import httpx
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.messages.ai import add_ai_message_chunks

from tests.providers.clients import collect, read_file, streamed_answer
from tests.providers.wire import Failure, Reply, ToolCall


async def test_text_streams_as_ndjson_with_counts(ollama_server, llama):
    chunks = await streamed_answer(ollama_server, llama())
    message = add_ai_message_chunks(*chunks)
    usage = ollama_server.model_requests()[0].usage
    assert message.usage_metadata["input_tokens"] == usage["prompt_eval_count"]
    assert message.usage_metadata["output_tokens"] == usage["eval_count"]
    assert message.response_metadata["done_reason"] == "stop"


async def test_tool_call_is_parsed_and_its_result_goes_back(ollama_server, llama):
    ollama_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": "a.py"})]), Reply(text="It is short.")
    )
    model = llama().bind_tools([read_file])
    history = [HumanMessage("What is in a.py?")]
    first = await collect(model, history)
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("read_file", {"path": "a.py"})]
    history += [first, ToolMessage("print(1)", tool_call_id=first.tool_calls[0]["id"])]
    assert (await collect(model, history)).text == "It is short."
    sent = ollama_server.model_requests()[1].body["messages"]
    assert sent[1]["tool_calls"] == [
        {"function": {"name": "read_file", "arguments": {"path": "a.py"}}}
    ]
    assert sent[2] == {"role": "tool", "content": "print(1)"}  # no tool_name or id reaches Ollama


async def test_thinking_arrives_as_reasoning_content(ollama_server, llama):
    ollama_server.add(Reply(thinking="Count the letters.", text="Three."))
    message = await collect(
        llama(model="qwen3", reasoning=True), [HumanMessage("How many r in strawberry?")]
    )
    assert message.additional_kwargs["reasoning_content"] == "Count the letters."
    assert message.text == "Three."
    assert ollama_server.model_requests()[0].body["think"] is True


async def test_truncated_answer_reports_length(ollama_server, llama):
    ollama_server.add(Reply(text="It was the best of", stop="max_tokens"))
    message = await collect(llama(), [HumanMessage("Tell a story")])
    assert message.response_metadata["done_reason"] == "length"


def test_model_validation_reads_the_local_model_list(ollama_server, llama):
    llama(validate_model_on_init=True)
    assert [r.path for r in ollama_server.requests] == ["/api/tags"]
    with pytest.raises(ValueError, match="Model `mistral` not found in Ollama"):
        llama(model="mistral", validate_model_on_init=True)


@pytest.mark.parametrize(
    ("options", "status", "message"),
    [
        ({"model": "mistral"}, 404, 'model "mistral" not found, try pulling it first'),
        ({"reasoning": True}, 400, '"llama3.2" does not support thinking'),
    ],
)
async def test_requests_the_model_cannot_serve_are_refused(llama, options, status, message):
    from ollama import ResponseError

    with pytest.raises(ResponseError) as raised:
        await collect(llama(**options), [HumanMessage("hi")])
    assert raised.value.status_code == status
    assert raised.value.error == message


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"role": "robot", "content": "hi"}, "invalid role: 'robot'"),
        ({"role": "user", "content": [{"type": "text", "text": "hi"}]}, "cannot unmarshal array"),
        (
            {
                "role": "assistant",
                "tool_calls": [{"function": {"name": "read_file", "arguments": '{"path": "a"}'}}],
            },
            "cannot unmarshal string",
        ),
    ],
)
def test_messages_outside_the_documented_shape_are_refused(ollama_server, message, error):
    ollama_server.add(Reply(text="kept for a valid request"))
    body = {"model": "llama3.2", "messages": [message], "stream": False}
    response = httpx.post(f"{ollama_server.base_url}/api/chat", json=body)
    assert response.status_code == 400
    assert error in response.json()["error"]
    assert len(ollama_server.script) == 1  # a rejected request consumes no step


async def test_tools_on_a_model_without_tool_support_are_refused(ollama_server, llama):
    from ollama import ResponseError  # imported where used: an SDK is a second of every collection

    ollama_server.models = {"gemma:latest": ("completion",)}
    with pytest.raises(ResponseError) as raised:
        await collect(llama(model="gemma").bind_tools([read_file]), [HumanMessage("hi")])
    assert raised.value.error == "registry.ollama.ai/library/gemma:latest does not support tools"


async def test_server_errors_and_mid_stream_errors_surface(ollama_server, llama):
    from ollama import ResponseError

    ollama_server.add(
        Failure(500, message="llama runner process has terminated"),
        Reply(text="partial", stream_error="unexpected EOF"),
    )
    with pytest.raises(ResponseError) as raised:
        await collect(llama(), [HumanMessage("hi")])
    assert (raised.value.status_code, raised.value.error) == (
        500,
        "llama runner process has terminated",
    )
    with pytest.raises(ResponseError, match="unexpected EOF"):
        await collect(llama(), [HumanMessage("hi")])
