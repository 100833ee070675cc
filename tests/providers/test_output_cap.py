"""Every model call carries an output cap on the wire, so no server generates without end:
the real clients made by `resolve_model`, against the validating local servers."""

from __future__ import annotations

import pytest

from deepacp.models import resolve_model
from deepacp.output_cap import DEFAULT_MAX_TOKENS, LOCAL_MAX_TOKENS
from tests.providers.wire import Reply


def configure(home, text: str) -> None:
    (home / "config.toml").write_text(text)


async def before_and_after(server, model: str, home, config: str) -> tuple[dict, dict]:
    """What `model` sends `server` on a call before `config` is written, and on one after."""
    server.add(Reply(text="a"), Reply(text="b"))
    await resolve_model(model).ainvoke("hi")
    configure(home, config)
    await resolve_model(model).ainvoke("hi")
    first, second = server.model_requests()
    return first.body, second.body


async def test_an_openai_compatible_server_gets_the_local_cap(
    openai_server, isolated_home, monkeypatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", f"{openai_server.base_url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    config = "[providers.openai]\nmax_tokens = 1234\n"
    first, second = await before_and_after(openai_server, "openai:smollm2", isolated_home, config)
    assert first["max_completion_tokens"] == LOCAL_MAX_TOKENS
    assert second["max_completion_tokens"] == 1234


async def test_anthropic_gets_the_default_cap_or_the_configured_one(
    anthropic_server, isolated_home, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    config = "[providers.anthropic]\nmax_tokens = 2000\n"
    model = "anthropic:claude-sonnet-4-5"
    first, second = await before_and_after(anthropic_server, model, isolated_home, config)
    assert first["max_tokens"] == DEFAULT_MAX_TOKENS
    assert second["max_tokens"] == 2000


async def test_ollama_gets_num_predict(ollama_server, isolated_home, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", ollama_server.base_url)
    ollama_server.add(Reply(text="a"))
    await resolve_model("ollama:qwen3").ainvoke("hi")
    assert ollama_server.model_requests()[0].body["options"]["num_predict"] == LOCAL_MAX_TOKENS


@pytest.mark.parametrize("value", ["0", "-5", "1.5", '"many"', "true"])
def test_a_bad_cap_is_one_clear_error(isolated_home, value):
    from deepacp.config import load_config
    from deepacp.errors import ConfigError

    configure(isolated_home, f"[providers.openai]\nmax_tokens = {value}\n")
    with pytest.raises(ConfigError, match=r"\[providers\.openai\] max_tokens must be a whole"):
        load_config()
