"""config.toml: effort, provider base URLs, the retry policy, goal rounds and the rewind
budget, and clear errors."""

from __future__ import annotations

import pytest

from deepacp.config import DEFAULT_GOAL_ROUNDS, DEFAULT_REWIND_BUDGET, RetryPolicy, load_config
from deepacp.errors import ConfigError
from deepacp.models import base_url


def test_defaults_without_a_file(isolated_home):
    config = load_config()
    assert (config.effort, config.base_urls, config.retry) == (None, {}, RetryPolicy())
    assert config.goal_rounds == DEFAULT_GOAL_ROUNDS == 3


def test_goal_rounds_are_read(isolated_home):
    (isolated_home / "config.toml").write_text("[goal]\nrounds = 5\n")
    assert load_config().goal_rounds == 5


def test_effort_base_urls_and_retry_are_read(isolated_home):
    (isolated_home / "config.toml").write_text(
        'effort = "high"\n'
        '[providers.anthropic]\nbase_url = "https://gateway.example/anthropic"\n'
        "[retry]\nattempts = 3\ninitial_delay = 0.5\n"
    )
    config = load_config()
    assert config.effort == "high"
    assert config.base_urls == {"anthropic": "https://gateway.example/anthropic"}
    assert config.retry == RetryPolicy(attempts=3, initial_delay=0.5, max_delay=60.0)


def test_the_rewind_budget_has_a_default_and_is_read_in_megabytes(isolated_home):
    assert load_config().rewind_budget == DEFAULT_REWIND_BUDGET == 256 * 2**20
    (isolated_home / "config.toml").write_text("[rewind]\nbudget_mb = 1.5\n")
    assert load_config().rewind_budget == 1_572_864


def test_the_provider_variable_wins_over_the_config_base_url(isolated_home, monkeypatch):
    (isolated_home / "config.toml").write_text('[providers.openai]\nbase_url = "http://a/v1"\n')
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert base_url("openai") == "http://a/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://b/v1")
    assert base_url("openai") == "http://b/v1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('effort = "max"', "effort' must be one of off, low, medium, high, not 'max'"),
        ("[providers.anthropic]\nbase_url = 3", "base_url must be a string URL"),
        ("[retry]\nattempts = 0", "retry.attempts must be at least 1"),
        ('[retry]\ninitial_delay = "soon"', "retry.initial_delay must be a number"),
        ("[goal]\nrounds = 0", "goal.rounds must be a whole number of at least 1"),
        ("[goal]\nrounds = 2.5", "goal.rounds must be a whole number of at least 1"),
        ("goal = 3", "goal.rounds must be a whole number of at least 1"),
        ("[rewind]\nbudget_mb = -1", "budget_mb must be a number of megabytes"),
        ('verify = "no"', "'verify' must be true or false"),
        ("model = " + "[" * 5000, "nested too deeply"),
    ],
)
def test_bad_values_are_one_line_errors(isolated_home, text, message):
    (isolated_home / "config.toml").write_text(text + "\n")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('modle = "openai:gpt-5.1"', "unknown key 'modle' (did you mean 'model'?)"),
        ('sandbx = "read-only"', "unknown key 'sandbx' (did you mean 'sandbox'?)"),
        ("[retyr]\nattempts = 2", "unknown key 'retyr' (did you mean 'retry'?)"),
        ("colour = 1", "unknown key 'colour'"),
        ('[providers.openai]\nbase_ulr = "x"', "[providers.openai]: unknown key 'base_ulr' "),
        ("[providers.openai]\nfirst_token_timout = 5", "(did you mean 'first_token_timeout'?)"),
        ("[retry]\nattempt = 2", "[retry]: unknown key 'attempt' (did you mean 'attempts'?)"),
        ("[goal]\nround = 2", "[goal]: unknown key 'round' (did you mean 'rounds'?)"),
        ("[providers.openai]\nfirst_token_timeout = 0", "first_token_timeout must be seconds"),
    ],
)
def test_unknown_keys_anywhere_are_refused_with_the_nearest_valid_one(isolated_home, text, message):
    path = isolated_home / "config.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_first_token_timeouts_are_read_per_provider(isolated_home):
    (isolated_home / "config.toml").write_text(
        "[providers.openai]\nfirst_token_timeout = 45\n"
        "[providers.ollama]\nfirst_token_timeout = 2.5\n"
    )
    assert load_config().first_token_timeouts == {"openai": 45.0, "ollama": 2.5}


def test_verify_is_on_unless_turned_off(isolated_home):
    assert load_config().verify is True
    (isolated_home / "config.toml").write_text("verify = false\n")
    assert load_config().verify is False


def test_a_config_nested_too_deeply_is_left_for_the_user_to_edit(isolated_home):
    from deepacp.config_write import set_config

    broken = "model = " + "[" * 5000 + "\n"
    (isolated_home / "config.toml").write_text(broken)
    with pytest.raises(ConfigError, match='add `effort = "low"` at the top yourself'):
        set_config("effort", "low")
    assert (isolated_home / "config.toml").read_text() == broken
