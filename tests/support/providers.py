"""`deepacp --stdio` on a real provider client (ChatAnthropic, ChatOpenAI, ChatOllama)
pointed at a local wire server from `tests/providers/`, as a user with a key would run it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.providers.wire import WireServer
from tests.support.acp import Agent, start_agent

MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai": "openai:gpt-4.1",
    "ollama": "ollama:qwen3",
}
FAST_RETRIES = "[retry]\nattempts = 5\ninitial_delay = 0.05\nmax_delay = 5\n"


def provider_env(provider: str, server: WireServer, model: str | None = None) -> dict[str, str]:
    """The environment that points the provider's client at `server`."""
    env = {"DEEPACP_MODEL": model or MODELS[provider]}
    if provider == "anthropic":
        env |= {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test"}
    elif provider == "openai":
        env |= {"OPENAI_BASE_URL": f"{server.base_url}/v1", "OPENAI_API_KEY": "test"}
    else:
        env |= {"OLLAMA_HOST": server.base_url}
    return env


@contextlib.asynccontextmanager
async def provider_agent(
    tmp_path: Path,
    provider: str,
    server: WireServer,
    *,
    config: str = FAST_RETRIES,
    model: str | None = None,
    home: Path | None = None,
    **kwargs: Any,
) -> AsyncIterator[Agent]:
    """Start `deepacp --stdio` whose model is `provider`'s real client talking to `server`,
    with `config` as its config.toml (fast retries by default)."""
    home = home or tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(config)
    env = provider_env(provider, server, model) | kwargs.pop("env", {})
    async with start_agent(tmp_path, [], home=home, env=env, **kwargs) as agent:
        yield agent
