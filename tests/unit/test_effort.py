"""Reasoning effort: the levels each model offers and what each level asks of its provider."""

from __future__ import annotations

import pytest

from deepacp.acp.updates import config_options
from deepacp.effort import effort_choice, effort_levels, effort_options, with_answer_room


@pytest.mark.parametrize(
    ("provider", "name", "levels"),
    [
        ("anthropic", "claude-sonnet-4-5", ("off", "low", "medium", "high")),
        ("anthropic", "claude-3-7-sonnet-latest", ("off", "low", "medium", "high")),
        ("anthropic", "claude-3-5-haiku-latest", ()),
        ("openai", "gpt-5.1", ("off", "low", "medium", "high")),
        ("openai", "o3", ("low", "medium", "high")),
        ("openai", "gpt-4.1", ()),
        ("openai", "gpt-5-chat-latest", ()),
        ("ollama", "qwen3:8b", ("off", "high")),
        ("ollama", "gpt-oss:20b", ("low", "medium", "high")),
        ("ollama", "llama3.2", ()),
        ("scripted", "x.json", ()),
    ],
)
def test_levels_follow_what_the_model_can_do(provider, name, levels):
    assert effort_levels(provider, name) == levels


@pytest.mark.parametrize(
    ("provider", "name", "effort", "options"),
    [
        ("anthropic", "claude-sonnet-4-5", "off", {}),
        (
            "anthropic",
            "claude-sonnet-4-5",
            "high",
            {"thinking": {"type": "enabled", "budget_tokens": 24_576}},
        ),
        ("openai", "gpt-5.1", "off", {"reasoning_effort": "none"}),
        ("openai", "gpt-5-mini", "off", {"reasoning_effort": "minimal"}),
        ("openai", "o3", "low", {"reasoning_effort": "low"}),
        ("openai", "o3", "off", {"reasoning_effort": "medium"}),  # o3 cannot stop reasoning
        ("openai", "gpt-4.1", "high", {}),
        ("ollama", "qwen3", "off", {"reasoning": False}),
        ("ollama", "qwen3", "high", {"reasoning": True}),
        ("ollama", "gpt-oss:20b", "medium", {"reasoning": "medium"}),
    ],
)
def test_each_level_maps_to_the_providers_own_setting(provider, name, effort, options):
    assert effort_options(provider, name, effort) == options


def test_unset_effort_is_the_providers_usual_behaviour():
    assert effort_choice("anthropic", "claude-sonnet-4-5", None).current == "off"
    assert effort_choice("openai", "o3", None).current == "medium"
    assert effort_choice("ollama", "gpt-oss", None).current == "high"


def test_thinking_leaves_room_for_the_answer():
    from langchain_anthropic import ChatAnthropic

    thinking = {"type": "enabled", "budget_tokens": 24_576}
    small = ChatAnthropic(
        model="claude-sonnet-4-5", api_key="k", max_tokens=4096, thinking=thinking
    )
    assert with_answer_room(small).max_tokens > 24_576
    roomy = ChatAnthropic(
        model="claude-sonnet-4-5", api_key="k", max_tokens=64_000, thinking=thinking
    )
    assert with_answer_room(roomy) is roomy


def test_the_acp_picker_is_a_thought_level_option_only_where_there_are_levels():
    choice = effort_choice("ollama", "qwen3", "off")
    options = config_options("ask", "ollama:qwen3", ["ollama:qwen3"], choice)
    picker = options[-1]
    assert (picker.id, picker.category, picker.current_value) == ("effort", "thought_level", "off")
    assert [(o.value, o.name) for o in picker.options] == [("off", "Off"), ("high", "On")]
    plain = config_options("ask", "ollama:llama3.2", ["ollama:llama3.2"], None)
    assert [o.id for o in plain] == ["mode", "model"]
