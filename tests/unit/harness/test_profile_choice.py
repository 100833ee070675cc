"""Which harness profile a session gets: the user's choice for any model, else the compact
profile for a server on this machine with a small context, else the model family's; and
the `--profile` flag refused in one line when it names no profile."""

from __future__ import annotations

import pytest

from deepacp.cli import main
from deepacp.harness.profiles import (
    CLAUDE,
    SMALL_CONTEXT,
    SMALL_LOCAL,
    ServerFacts,
    choose_profile,
)

LLAMA = "openai:smollm2"  # an OpenAI-compatible server at a base URL


def test_the_users_choice_wins_for_any_model():
    assert choose_profile("anthropic:claude-sonnet-4-5", "small-local") is SMALL_LOCAL
    assert choose_profile(LLAMA, "small-local") is SMALL_LOCAL
    full = choose_profile("ollama:qwen3", "default")  # Ollama's own profile is the compact one
    assert full is not None and full.name == "default" and full.offers("write_todos")
    assert choose_profile("anthropic:claude-sonnet-4-5", "default") is CLAUDE


@pytest.mark.parametrize(
    ("facts", "compact"),
    [
        (ServerFacts(local=True, context=2048), True),
        (ServerFacts(local=True, context=SMALL_CONTEXT), True),
        (ServerFacts(local=True, context=SMALL_CONTEXT + 1), False),
        (ServerFacts(local=False, context=2048), False),  # a hosted API: its own business
        (ServerFacts(local=True, context=None), False),  # the server did not say
        (None, False),
    ],
)
def test_a_local_server_with_a_small_context_gets_the_compact_profile(facts, compact):
    chosen = choose_profile(LLAMA, None, facts)
    assert (chosen is SMALL_LOCAL) == compact
    # The user's choice still wins over what the server says.
    assert choose_profile(LLAMA, "default", facts).name == "default"


def test_ollama_keeps_the_compact_profile_unless_told_otherwise():
    assert choose_profile("ollama:qwen3") is SMALL_LOCAL


@pytest.mark.parametrize(
    "argv",
    [
        ["--profile", "tiny", "--stdio"],
        ["run", "--profile", "small_local", "hello"],
    ],
)
def test_an_unknown_profile_flag_is_one_line_naming_the_profiles(
    argv, capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("DEEPACP_HOME", str(tmp_path))
    monkeypatch.setenv("DEEPACP_MODEL", "scripted:/nonexistent.json")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "--profile: unknown profile" in err and "choose auto, default, small-local" in err
