"""Messages API rules the client library cannot be made to break, checked on raw bodies."""

from __future__ import annotations

import pytest

from tests.providers.anthropic_rules import check_headers, validate
from tests.providers.signatures import Signer
from tests.providers.wire import InvalidRequest

TOOL = {
    "name": "read_file",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def body(messages, **extra):
    return {"model": "claude-sonnet-4-5", "max_tokens": 2048, "messages": messages, **extra}


def error(request) -> str:
    with pytest.raises(InvalidRequest) as raised:
        validate(request, Signer())
    return raised.value.message


def use(call_id="toolu_1"):
    return {"type": "tool_use", "id": call_id, "name": "read_file", "input": {}}


def result(call_id="toolu_1"):
    return {"type": "tool_result", "tool_use_id": call_id, "content": "x"}


def test_consecutive_turns_of_one_role_are_merged_not_rejected():
    turns = validate(
        body([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]), Signer()
    )
    assert [t["role"] for t in turns] == ["user"]
    assert [b["text"] for b in turns[0]["content"]] == ["a", "b"]


def test_a_conversation_may_start_with_an_assistant_turn():
    # The reference only asks for user/assistant turns; the first-party API accepts this.
    validate(
        body([{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "hi"}]), Signer()
    )


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (
            {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]},
            "max_tokens: Field required",
        ),
        (
            body([{"role": "user", "content": "hi"}], model=""),
            "model: String should have at least 1 character",
        ),
        (body([]), "messages: List should have at least 1 item"),
        (
            body([{"role": "system", "content": "hi"}]),
            "messages.0.role: Input should be 'user' or 'assistant'",
        ),
        (
            body([{"role": "user", "content": "hi"}], tools=[{**TOOL, "name": "read file"}]),
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        ),
        (
            body([{"role": "user", "content": "hi"}], tools=[TOOL, TOOL]),
            "tools: Tool names must be unique.",
        ),
        (
            body(
                [{"role": "user", "content": "hi"}],
                tools=[{"name": "x", "input_schema": {"type": "string"}}],
            ),
            "tools.0.custom.input_schema.type: Input should be 'object'",
        ),
        (
            body(
                [{"role": "user", "content": "hi"}],
                tools=[TOOL],
                tool_choice={"type": "tool", "name": "nope"},
            ),
            "tool_choice: Tool 'nope' not found in tools",
        ),
        (
            body(
                [{"role": "user", "content": "hi"}],
                thinking={"type": "enabled", "budget_tokens": 512},
            ),
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            body(
                [{"role": "user", "content": "hi"}],
                thinking={"type": "enabled", "budget_tokens": 4096},
            ),
            "`max_tokens` must be greater than `thinking.budget_tokens`.",
        ),
        (
            body(
                [{"role": "user", "content": "hi"}],
                tools=[TOOL],
                tool_choice={"type": "any"},
                thinking={"type": "enabled", "budget_tokens": 1024},
            ),
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
    ],
)
def test_invalid_parameters(request_body, message):
    assert error(request_body) == message


def test_tool_results_must_come_first_in_the_next_user_turn():
    late = [{"type": "text", "text": "here you go"}, result()]
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use()]},
        {"role": "user", "content": late},
    ]
    assert (
        "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"
        in error(body(messages, tools=[TOOL]))
    )
    messages[2]["content"] = [result(), {"type": "text", "text": "here you go"}]
    validate(body(messages, tools=[TOOL]), Signer())


def test_tool_use_ids_are_unique_and_well_formed():
    twice = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use()]},
        {"role": "user", "content": [result()]},
        {"role": "assistant", "content": [use()]},
        {"role": "user", "content": [result()]},
    ]
    assert error(body(twice, tools=[TOOL])) == "messages.3.content.0: `tool_use` ids must be unique"
    odd = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use("call:1")]},
        {"role": "user", "content": [result("call:1")]},
    ]
    assert "tool_use.id: String should match pattern" in error(body(odd, tools=[TOOL]))


def test_thinking_block_needs_its_signature():
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "plan"}, {"type": "text", "text": "ok"}],
        },
        {"role": "user", "content": "next"},
    ]
    assert error(body(messages)) == "messages.1.content.0.thinking.signature: Field required"


def test_cache_breakpoint_rules():
    def cached(ttl):
        return {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral", "ttl": ttl}}

    ordered = body([{"role": "user", "content": [cached("5m")]}], system=[cached("1h")])
    validate(ordered, Signer())
    reversed_ttls = body([{"role": "user", "content": [cached("1h")]}], system=[cached("5m")])
    assert "ttl '1h' must not come after one with ttl '5m'" in error(reversed_ttls)
    assert "cache_control: Input should be" in error(
        body([{"role": "user", "content": [cached("10m")]}])
    )


def test_headers_are_required():
    with pytest.raises(InvalidRequest) as raised:
        check_headers({"anthropic-version": "2023-06-01"})
    assert (raised.value.status, raised.value.kind) == (401, "authentication_error")
    with pytest.raises(InvalidRequest) as raised:
        check_headers({"x-api-key": "k"})
    assert raised.value.message == "anthropic-version: header is required"
