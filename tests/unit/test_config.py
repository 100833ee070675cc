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
    ],
)
def test_bad_values_are_one_line_errors(isolated_home, text, message):
    (isolated_home / "config.toml").write_text(text + "\n")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config()


def test_verify_is_on_unless_turned_off(isolated_home):
    assert load_config().verify is True
    (isolated_home / "config.toml").write_text("verify = false\n")
    assert load_config().verify is False
