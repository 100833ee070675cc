"""Errors a user can act on, over ACP: a wrong key, a wrong model, a server that cannot be
reached, one that never answers, and each model server's context overflow come back as one
line naming the cause and the fix (never "-32603 Internal error"), the key never in it, and
the server stays up. The real provider clients talk to local servers (tests/providers/)."""

from __future__ import annotations

from typing import Any

import pytest
from acp.exceptions import RequestError

from tests.providers.canned import LLAMA_CPP, CannedServer, SilentServer, closed_port
from tests.providers.wire import Failure
from tests.support.providers import provider_agent

KEY = "sk-echoed-canary-0123456789abcdef"


async def failed_prompt(agent: Any) -> RequestError:
    """The error the first prompt of a new session ends in; a second session still opens."""
    session = await agent.new_session()
    with pytest.raises(RequestError) as raised:
        await agent.prompt(session, "hello")
    assert await agent.new_session()  # the server is still up
    return raised.value


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_refused_key_names_its_variable_and_never_shows_the_key(
    tmp_path, provider, anthropic_server, openai_server
):
    server = anthropic_server if provider == "anthropic" else openai_server
    server.add(Failure(401, f"invalid x-api-key {KEY}"))
    variable = f"{provider.upper()}_API_KEY"
    env = {variable: KEY}
    async with provider_agent(tmp_path, provider, server, env=env, in_process=True) as agent:
        error = await failed_prompt(agent)
    assert error.code == -32000
    assert str(error) == (
        f"the API key for {provider} was refused: check {variable} or run `deepacp setup`"
    )
    assert KEY not in agent.client.text()


async def test_an_unknown_model_is_named(tmp_path, anthropic_server):
    anthropic_server.add(Failure(404, "model: claude-sonet-4.5"))
    model = "anthropic:claude-sonet-4.5"
    async with provider_agent(
        tmp_path, "anthropic", anthropic_server, model=model, in_process=True
    ) as agent:
        error = await failed_prompt(agent)
    assert (error.code, str(error)) == (
        -32000,
        "no model 'claude-sonet-4.5' at anthropic: check --model",
    )


async def test_a_model_ollama_has_not_pulled_is_named(tmp_path, ollama_server):
    async with provider_agent(
        tmp_path, "ollama", ollama_server, model="ollama:qwen9", in_process=True
    ) as agent:
        error = await failed_prompt(agent)
    assert (error.code, str(error)) == (-32000, "no model 'qwen9' at ollama: check --model")


async def test_a_closed_port_is_named_with_where_its_url_came_from_and_tried_twice_at_most(
    tmp_path, openai_server
):
    url = closed_port()
    env = {"OPENAI_BASE_URL": url}
    async with provider_agent(tmp_path, "openai", openai_server, env=env, in_process=True) as agent:
        error = await failed_prompt(agent)
    assert str(error) == f"cannot reach {url} (from OPENAI_BASE_URL): connection refused"
    assert "retrying" not in agent.client.text()


async def test_a_url_from_config_toml_says_so(tmp_path, openai_server):
    url = closed_port()
    config = f'[providers.openai]\nbase_url = "{url}"\n'
    env = {"OPENAI_BASE_URL": ""}
    async with provider_agent(
        tmp_path, "openai", openai_server, config=config, env=env, in_process=True
    ) as agent:
        error = await failed_prompt(agent)
    assert str(error) == (
        f"cannot reach {url} (from [providers.openai] base_url in config.toml): connection refused"
    )


@pytest.mark.parametrize("where", ["variable", "config"])
async def test_no_first_token_is_a_timeout_not_unreachable_and_is_never_sent_again(
    tmp_path, openai_server, where
):
    with SilentServer() as silent:
        env = {"OPENAI_BASE_URL": f"{silent.base_url}/v1"}
        config = "[retry]\nattempts = 5\ninitial_delay = 0.05\n"
        if where == "variable":
            env["DEEPACP_FIRST_TOKEN_TIMEOUT"] = "1"
            fix = "DEEPACP_FIRST_TOKEN_TIMEOUT"
        else:
            config += "[providers.openai]\nfirst_token_timeout = 1\n"
            fix = "first_token_timeout under [providers.openai] in config.toml"
        async with provider_agent(
            tmp_path, "openai", openai_server, config=config, env=env, in_process=True
        ) as agent:
            error = await failed_prompt(agent)
        assert silent.requests == 1
    assert str(error) == (
        f"no answer from {silent.base_url}/v1 after 1 s (the server may still be reading a "
        f"long prompt): to wait longer, set {fix}"
    )
    assert "unreachable" not in agent.client.text()


VLLM = {
    "object": "error",
    "message": "This model's maximum context length is 2048 tokens. However, you requested "
    "3754 tokens (3654 in the messages, 100 in the completion). Please reduce the length of "
    "the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
VLLM_NEW = {
    "error": {
        "message": "This model's maximum context length is 2048 tokens. However, your request "
        "has 3654 input tokens. Please reduce the length of the input messages.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
}
LM_STUDIO = {
    "error": "Trying to keep the first 3654 tokens when context the overflows. However, the "
    "model is loaded with context length of only 2048 tokens, which is not enough. Try to "
    "load the model with a larger context length, or provide a shorter input"
}
LM_STUDIO_N_KEEP = {"error": "Cannot truncate prompt with n_keep (3654) >= n_ctx (2048)"}
SIZED = (
    "the model's context (2,048 tokens) is smaller than deepacp's prompt (3,654 tokens): "
    "raise the server's context size or use the compact profile"
)


@pytest.mark.parametrize(
    "body",
    [LLAMA_CPP, VLLM, VLLM_NEW, LM_STUDIO, LM_STUDIO_N_KEEP],
    ids=["llama.cpp", "vllm", "vllm-new", "lm-studio", "lm-studio-n-keep"],
)
async def test_each_servers_context_overflow_is_one_line_with_the_sizes(
    tmp_path, openai_server, body
):
    with CannedServer(400, body) as server:
        env = {"OPENAI_BASE_URL": f"{server.base_url}/v1"}
        async with provider_agent(
            tmp_path, "openai", openai_server, env=env, in_process=True
        ) as agent:
            error = await failed_prompt(agent)
        assert server.requests == 1  # summarizing could not help: nothing sent again
    assert (error.code, str(error)) == (-32000, SIZED)


async def test_ollamas_context_overflow_is_one_line(tmp_path, ollama_server):
    body = {"error": "the input length exceeds the context length"}
    with CannedServer(400, body) as server:
        env = {"OLLAMA_HOST": server.base_url}
        async with provider_agent(
            tmp_path, "ollama", ollama_server, env=env, in_process=True
        ) as agent:
            error = await failed_prompt(agent)
    assert str(error).startswith("the model's context is smaller than deepacp's prompt (about ")
    assert str(error).endswith(
        " tokens): raise the server's context size or use the compact profile"
    )
