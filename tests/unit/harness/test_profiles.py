"""Harness profiles: which one a model gets, plugins, and what a profile changes."""

from __future__ import annotations

import json
import logging
from importlib.metadata import EntryPoint

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage

from deepacp import create_deep_agent
from deepacp.backends import LocalShellBackend
from deepacp.harness import profiles
from deepacp.harness.names import GLOB
from deepacp.harness.profiles import CLAUDE, GPT5, SMALL_LOCAL, HarnessProfile, profile_for
from deepacp.harness.prompts import append_to_system
from deepacp.testing import ScriptedChatModel


@pytest.fixture
def plugins(monkeypatch):
    """Install entry points for the registry to find."""

    def install(*points: EntryPoint) -> None:
        monkeypatch.setattr(profiles, "entry_points", lambda group: list(points))
        profiles.registry.cache_clear()

    yield install
    profiles.registry.cache_clear()


def point(name: str, attr: str) -> EntryPoint:
    return EntryPoint(name, f"tests.unit.harness.profile_plugin:{attr}", "deepacp.profiles")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("anthropic:claude-sonnet-4-5", CLAUDE),  # the provider's default
        ("anthropic:claude-opus-4-5", CLAUDE),
        ("openai:gpt-5.1", GPT5),  # exact
        ("openai:gpt-5-mini", GPT5),
        ("openai:gpt-4.1", None),  # no exact match, no OpenAI default: the default harness
        ("ollama:qwen3-coder", SMALL_LOCAL),
        ("scripted:/tmp/script.json", None),
    ],
)
def test_lookup_is_exact_model_then_provider_then_none(plugins, spec, expected):
    plugins()
    assert profile_for(spec) is expected


def test_plugins_add_and_replace_profiles_and_broken_ones_are_skipped(plugins, caplog):
    plugins(
        point("acme", "PROFILES"),
        point("bad", "NOT_A_PROFILE"),
        EntryPoint("gone", "tests.unit.harness.no_such_module:X", "deepacp.profiles"),
    )
    with caplog.at_level(logging.WARNING, logger="deepacp.harness.profiles"):
        assert profile_for("openai:gpt-4.1").name == "acme-gpt-4.1"
    assert profile_for("anthropic:claude-sonnet-4-5").name == "acme-claude"
    assert profile_for("openai:gpt-5.1") is GPT5  # built-ins stay for keys not replaced
    assert "not a HarnessProfile" in caplog.text and "no_such_module" in caplog.text


def recorded(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


async def run(tmp_path, profile, turns, **kwargs):
    model = ScriptedChatModel(turns=turns, record=str(tmp_path / "requests.jsonl"))
    agent = create_deep_agent(
        model, backend=LocalShellBackend(root_dir=str(tmp_path)), profile=profile, **kwargs
    )
    return await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})


async def test_an_excluded_tool_is_not_offered_and_refused_if_called(tmp_path):
    turns = [
        {"tool_calls": [{"id": "g", "name": GLOB, "args": {"pattern": "*"}}]},
        {"content": "ok"},
    ]
    state = await run(tmp_path, SMALL_LOCAL, turns)
    first = recorded(tmp_path / "requests.jsonl")[0]
    assert GLOB not in first["tools"] and "task" not in first["tools"] and "ls" in first["tools"]
    [refusal] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert refusal.status == "error" and "glob is not available" in refusal.content


class Signature(AgentMiddleware):
    name = "Signature"

    async def awrap_model_call(self, request, handler):
        return await handler(request.override(system_message=append_to_system(request, "SIGNED")))


async def test_a_profiles_middleware_and_prompt_suffix_reach_the_model(tmp_path):
    profile = HarnessProfile("signed", prompt_suffix="- Be brief.", middleware=(Signature,))
    await run(tmp_path, profile, [{"content": "ok"}])
    system = recorded(tmp_path / "requests.jsonl")[0]["system"]
    assert "- Be brief." in system and system.rstrip().endswith("SIGNED")


async def test_sub_agents_default_to_the_profiles_sub_agent_model(tmp_path):
    child = tmp_path / "child.json"
    child.write_text(
        json.dumps(
            {"turns": [{"content": "child report"}], "record": str(tmp_path / "child.jsonl")}
        )
    )
    profile = HarnessProfile("delegating", subagent_model=f"scripted:{child}")
    brief = {"description": "Report.", "subagent_type": "general-purpose"}
    turns = [{"tool_calls": [{"id": "t", "name": "task", "args": brief}]}, {"content": "done"}]
    state = await run(tmp_path, profile, turns)
    assert [r["messages"][0]["content"] for r in recorded(tmp_path / "child.jsonl")] == ["Report."]
    [report] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert report.content == "child report"
