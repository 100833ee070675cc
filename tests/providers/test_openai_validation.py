"""A request the real OpenAI API rejects is rejected here too, through the real client."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from tests.providers.clients import read_file, refused
from tests.providers.openai_rules import validate_chat
from tests.providers.wire import InvalidRequest, Reply


def rejected(model, messages) -> dict:
    """The API error object `model` gets for `messages` (fails if it is accepted)."""
    import openai  # imported where used: an SDK is a second of every collection

    body = refused(model, messages, openai.BadRequestError)
    assert body["type"] == "invalid_request_error"
    return body


def tool_turn(call_id: str = "call_1") -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": call_id}]
    )


def test_unanswered_tool_call_is_rejected(openai_server, gpt):
    model = gpt().bind_tools([read_file])
    error = rejected(model, [HumanMessage("read a.py"), tool_turn(), HumanMessage("never mind")])
    assert error["message"] == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1"
    )
    assert error["param"] == "messages.[1].role"
    openai_server.add(Reply(text="ok"))
    answered = [HumanMessage("read a.py"), tool_turn(), ToolMessage("x", tool_call_id="call_1")]
    assert model.invoke(answered).text == "ok"


def test_tool_message_without_a_call_is_rejected(gpt):
    history = [HumanMessage("hi"), AIMessage("hello"), ToolMessage("x", tool_call_id="call_9")]
    error = rejected(gpt(), history)
    assert error["message"] == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
        "with 'tool_calls'."
    )


def test_tool_result_for_another_call_is_rejected(gpt):
    history = [HumanMessage("read"), tool_turn("call_1"), ToolMessage("x", tool_call_id="call_2")]
    assert rejected(gpt().bind_tools([read_file]), history)["param"] == "messages.[2].tool_call_id"


@pytest.mark.parametrize(
    ("name", "code"),
    [("read file", "invalid_value"), ("r" * 65, "string_above_max_length")],
)
def test_bad_function_names_are_rejected(gpt, name, code):
    function = {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }
    error = rejected(gpt().bind_tools([function]), [HumanMessage("hi")])
    assert (error["code"], error["param"]) == (code, "tools[0].function.name")


def test_invalid_parameter_schema_is_rejected(gpt):
    schema = {"type": "object", "properties": {"path": {"type": "text"}}}
    function = {"type": "function", "function": {"name": "read_file", "parameters": schema}}
    error = rejected(gpt().bind_tools([function]), [HumanMessage("hi")])
    assert error["code"] == "invalid_function_parameters"
    assert error["message"].startswith("Invalid schema for function 'read_file': ")


def test_empty_messages_are_rejected():
    with pytest.raises(InvalidRequest) as raised:
        validate_chat({"model": "gpt-4.1", "messages": []})
    assert raised.value.extra == {"param": "messages", "code": "empty_array"}


def test_responses_output_without_its_call_is_rejected(gpt):
    model = gpt(model="gpt-5.4", reasoning={"effort": "low"}).bind_tools([read_file])
    history = [HumanMessage("hi"), AIMessage("hello"), ToolMessage("x", tool_call_id="call_7")]
    assert (
        rejected(model, history)["message"]
        == "No tool call found for function call output with call_id call_7."
    )


def test_responses_call_without_its_output_is_rejected(gpt):
    model = gpt(model="gpt-5.4", reasoning={"effort": "low"}).bind_tools([read_file])
    error = rejected(model, [HumanMessage("read"), tool_turn("call_3"), HumanMessage("go on")])
    assert error["message"] == "No tool output found for function call call_3."
