"""A request the real Messages API rejects is rejected here too, through the real client.

Each test builds a history a harness bug could produce and checks that ChatAnthropic raises
the SDK's 400 error carrying the API's own message; a valid twin is accepted, so the check
is the rule, not a blanket refusal.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.ai import add_ai_message_chunks

from tests.providers.clients import read_file, refused
from tests.providers.wire import Reply, ToolCall

THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 4096}


def rejected(model, messages) -> str:
    """The API error message `model` gets for `messages` (fails if it is accepted)."""
    import anthropic  # imported where used: an SDK is a second of every collection

    body = refused(model, messages, anthropic.BadRequestError)
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    return body["error"]["message"]


def tool_turn(call_id: str = "toolu_01") -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": call_id}]
    )


def test_unanswered_tool_use_is_rejected(anthropic_server, claude):
    model = claude().bind_tools([read_file])
    message = rejected(model, [HumanMessage("read a.py"), tool_turn(), HumanMessage("never mind")])
    assert message == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message."
    )
    anthropic_server.add(Reply(text="ok"))
    answered = [HumanMessage("read a.py"), tool_turn(), ToolMessage("x", tool_call_id="toolu_01")]
    assert model.invoke(answered).text == "ok"


def test_tool_result_without_its_tool_use_is_rejected(claude):
    model = claude().bind_tools([read_file])
    history = [HumanMessage("hi"), AIMessage("hello"), ToolMessage("x", tool_call_id="toolu_99")]
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_99" in rejected(
        model, history
    )


def test_tool_blocks_without_tools_are_rejected(claude):
    history = [HumanMessage("read"), tool_turn(), ToolMessage("x", tool_call_id="toolu_01")]
    assert rejected(claude(), history) == (
        "Requests which include `tool_use` or `tool_result` blocks must define tools."
    )


def first_thinking_turn(anthropic_server, model) -> AIMessage:
    anthropic_server.add(
        Reply(thinking="Plan: read a.py.", tool_calls=[ToolCall("read_file", {"path": "a.py"})])
    )
    return add_ai_message_chunks(*model.stream([HumanMessage("read a.py")]))


def test_modified_thinking_block_is_rejected(anthropic_server, claude):
    model = claude(**THINKING).bind_tools([read_file])
    first = first_thinking_turn(anthropic_server, model)
    content = [
        {**b, "thinking": "Plan: delete a.py."} if b["type"] == "thinking" else b
        for b in first.content
    ]
    edited = first.model_copy(update={"content": content})
    history = [
        HumanMessage("read a.py"),
        edited,
        ToolMessage("x", tool_call_id=first.tool_calls[0]["id"]),
    ]
    assert (
        rejected(model, history) == "messages.1.content.0: Invalid `signature` in `thinking` block"
    )


def test_dropping_thinking_in_an_open_tool_loop_is_rejected(anthropic_server, claude):
    model = claude(**THINKING).bind_tools([read_file])
    first = first_thinking_turn(anthropic_server, model)
    stripped = first.model_copy(
        update={"content": [b for b in first.content if b["type"] != "thinking"]}
    )
    history = [
        HumanMessage("read a.py"),
        stripped,
        ToolMessage("x", tool_call_id=first.tool_calls[0]["id"]),
    ]
    assert "a final `assistant` message must start with a thinking block" in rejected(
        model, history
    )


def test_assistant_turn_that_is_only_thinking_is_rejected(anthropic_server, claude):
    anthropic_server.add(Reply(thinking="Nothing to say."))
    model = claude(**THINKING)
    only_thought = add_ai_message_chunks(*model.stream([HumanMessage("hi")]))
    assert [b["type"] for b in only_thought.content] == ["thinking"]
    history = [HumanMessage("hi"), only_thought, HumanMessage("and now?")]
    assert rejected(model, history) == (
        "messages.1: The final block in an assistant message cannot be `thinking`."
    )


def cached_system(n: int) -> SystemMessage:
    control = {"type": "ephemeral"}
    return SystemMessage(
        [{"type": "text", "text": f"part {i}", "cache_control": control} for i in range(n)]
    )


def test_five_cache_breakpoints_are_rejected(anthropic_server, claude):
    assert rejected(claude(), [cached_system(5), HumanMessage("hi")]) == (
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    )
    anthropic_server.add(Reply(text="ok"))
    assert claude().invoke([cached_system(4), HumanMessage("hi")]).text == "ok"


def test_automatic_cache_control_counts_as_a_breakpoint(claude):
    model = claude().bind(cache_control={"type": "ephemeral"})
    assert "Found 5." in rejected(model, [cached_system(4), HumanMessage("hi")])


# ChatAnthropic itself drops empty and blank text blocks from list content and empty
# assistant messages; these are the empty texts that still reach the wire.
@pytest.mark.parametrize(
    ("history", "message"),
    [
        (
            [
                SystemMessage([{"type": "text", "text": "rules"}, {"type": "text", "text": ""}]),
                HumanMessage("hi"),
            ],
            "system: text content blocks must be non-empty",
        ),
        (
            [HumanMessage("")],
            "messages.0: all messages must have non-empty content except for the optional "
            "final assistant message",
        ),
        ([HumanMessage("   ")], "messages: text content blocks must contain non-whitespace text"),
        (
            [HumanMessage("hi"), AIMessage(" \n"), HumanMessage("go on")],
            "messages: text content blocks must contain non-whitespace text",
        ),
    ],
)
def test_empty_text_is_rejected(claude, history, message):
    assert rejected(claude(), history) == message


def test_invalid_tool_schema_is_rejected(claude):
    broken = {
        "name": "read_file",
        "description": "Read.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "text"}}},
    }
    assert "JSON schema is invalid" in rejected(claude().bind_tools([broken]), [HumanMessage("hi")])
