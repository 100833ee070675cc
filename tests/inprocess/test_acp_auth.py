"""Which ways to authenticate the server offers, by client and model."""

from __future__ import annotations

from acp import PROTOCOL_VERSION
from acp import schema as S


async def initialize(agent_factory, env: dict[str, str], capabilities: dict) -> list[dict]:
    async with agent_factory([], env=env) as agent:
        raw = await agent.raw_request(
            "initialize", {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities}
        )
        S.InitializeResponse.model_validate(raw)
        assert raw["agentCapabilities"]["auth"] == {"logout": {}}
        return raw["authMethods"]


async def test_auth_methods_follow_the_client_and_the_model(agent_factory) -> None:
    keyed = {"DEEPACP_MODEL": "anthropic:claude-sonnet-4-5"}
    terminal = await initialize(agent_factory, keyed, {"auth": {"terminal": True}})
    assert [(m["type"], m["id"]) for m in terminal] == [
        ("terminal", "setup"),
        ("env_var", "model-api-key"),
    ]
    assert terminal[0]["args"] == ["setup"] and "env" not in terminal[0]
    assert terminal[1]["vars"] == [{"name": "ANTHROPIC_API_KEY", "secret": True}]
    # Terminal auth only for clients that said they can run it.
    plain = await initialize(agent_factory, keyed, {})
    assert [m["type"] for m in plain] == ["env_var"]
    legacy = await initialize(agent_factory, keyed, {"_meta": {"terminal-auth": True}})
    assert [m["type"] for m in legacy] == ["terminal", "env_var"]
    # A model that needs no key: nothing to sign in to.
    assert await initialize(agent_factory, {}, {"auth": {"terminal": True}}) == []  # scripted
    ollama = {"DEEPACP_MODEL": "ollama:qwen3-coder"}
    assert await initialize(agent_factory, ollama, {"auth": {"terminal": True}}) == []
