"""The Anthropic wire server's prompt-cache accounting follows the documented rules, so a
token-cost benchmark run against it measures what caching would save on the real API."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.messages.ai import add_ai_message_chunks

from tests.providers.anthropic_cache import PromptCache
from tests.providers.anthropic_rules import merge_turns
from tests.providers.wire import Reply

EPHEMERAL = {"type": "ephemeral"}
LONG = "Stable instructions for the agent. " * 150  # about 1300 tokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def request(*user_texts: str, system: str = LONG, model: str = "claude-sonnet-4-5", **extra):
    """A body with a cached system prompt and one user message per text."""
    messages = [{"role": "user", "content": t} for t in user_texts]
    return {
        "model": model,
        "max_tokens": 100,
        "system": [
            {
                "type": "text",
                "text": system,
                "cache_control": extra.pop("system_control", EPHEMERAL),
            }
        ],
        "messages": messages,
        **extra,
    }


def account(cache: PromptCache, body):
    usage = cache.account(body, merge_turns(body["messages"]))
    assert (
        usage.total_input_tokens
        == usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    return usage


def test_first_request_writes_the_prefix_and_the_next_reads_it():
    cache = PromptCache(Clock())
    first = account(cache, request("question one"))
    second = account(cache, request("question two"))
    assert first.cache_creation_input_tokens > 1024 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == second.total_input_tokens - second.cache_read_input_tokens


def test_a_prefix_below_the_minimum_is_not_cached():
    cache = PromptCache(Clock())
    for _ in range(2):
        usage = account(cache, request("q", system="short rules"))
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0
        assert usage.input_tokens == usage.total_input_tokens


def test_the_minimum_depends_on_the_model():
    cache = PromptCache(Clock())
    assert account(cache, request("q", model="claude-sonnet-4-5")).cache_creation_input_tokens > 0
    assert account(cache, request("q", model="claude-opus-4-5")).cache_creation_input_tokens == 0


def test_an_entry_expires_after_five_minutes_unless_used():
    clock = Clock()
    cache = PromptCache(clock)
    account(cache, request("a"))
    clock.now += 200
    assert account(cache, request("b")).cache_read_input_tokens > 0  # a hit refreshes it
    clock.now += 250
    assert account(cache, request("c")).cache_read_input_tokens > 0
    clock.now += 301
    expired = account(cache, request("d"))
    assert expired.cache_read_input_tokens == 0 and expired.cache_creation_input_tokens > 0


def test_a_one_hour_entry_outlives_five_minutes():
    clock = Clock()
    cache = PromptCache(clock)
    control = {"type": "ephemeral", "ttl": "1h"}
    written = account(cache, request("a", system_control=control))
    assert written.written["1h"] > 0 and written.written["5m"] == 0
    clock.now += 3000
    assert account(cache, request("b", system_control=control)).cache_read_input_tokens > 0


def test_changing_the_tools_invalidates_the_system_prefix():
    cache = PromptCache(Clock())
    tool = {"name": "read_file", "input_schema": {"type": "object"}}
    account(cache, request("a", tools=[tool]))
    assert account(cache, request("b", tools=[tool])).cache_read_input_tokens > 0
    renamed = {**tool, "name": "open_file"}
    assert account(cache, request("c", tools=[renamed])).cache_read_input_tokens == 0


def conversation(turns: int, **extra):
    """A growing conversation whose last block carries the breakpoint (automatic caching)."""
    messages = []
    for i in range(turns + 1):
        messages.append({"role": "user", "content": f"user message {i} " + "detail " * 30})
        messages.append({"role": "assistant", "content": f"assistant answer {i}"})
    messages.pop()
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "system": LONG,
        "messages": messages,
        "cache_control": EPHEMERAL,
        **extra,
    }


def test_automatic_caching_reads_the_previous_calls_prefix_within_the_lookback():
    cache = PromptCache(Clock())
    account(cache, conversation(10))
    grown = conversation(15)  # ten blocks later: the old breakpoint is within 20 blocks
    usage = account(cache, grown)
    assert usage.cache_read_input_tokens > 0 and usage.cache_creation_input_tokens > 0


def test_a_breakpoint_more_than_twenty_blocks_later_misses():
    cache = PromptCache(Clock())
    account(cache, conversation(10))
    usage = account(cache, conversation(22))  # 24 blocks later
    assert usage.cache_read_input_tokens == 0


def test_changing_thinking_settings_invalidates_only_the_messages():
    cache = PromptCache(Clock())
    body = request("q")
    body["messages"][0]["content"] = [
        {"type": "text", "text": "long question " * 200, "cache_control": EPHEMERAL}
    ]
    account(cache, body)
    thinking = {**body, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    usage = account(cache, thinking)
    system_only = account(PromptCache(Clock()), request("q")).cache_creation_input_tokens
    assert usage.cache_read_input_tokens == system_only
    assert usage.cache_creation_input_tokens > 0


async def test_the_client_sees_the_conversation_prefix_read_back(anthropic_server, claude):
    anthropic_server.add(Reply(text="first answer"), Reply(text="second answer"))
    model = claude().bind(cache_control=EPHEMERAL)  # automatic caching, as the middleware asks
    history = [SystemMessage(LONG), HumanMessage("first question")]
    first = add_ai_message_chunks(*[c async for c in model.astream(history)])
    history += [first, HumanMessage("second question")]
    second = add_ai_message_chunks(*[c async for c in model.astream(history)])
    written = first.usage_metadata["input_token_details"]["ephemeral_5m_input_tokens"]
    assert written > 1024
    assert second.usage_metadata["input_token_details"]["cache_read"] == written
    assert anthropic_server.model_requests()[1].body["cache_control"] == EPHEMERAL
