"""`deepacp run` meets a provider it cannot use: a refused key (from a gateway that echoes
it), an unknown model, a closed port, a server that never answers, a context overflow. Each
prints exactly one line naming the cause and the fix, then where the log is; no traceback,
no key, on the terminal; the details, redacted, in the log."""

from __future__ import annotations

import os
from pathlib import Path

from deepacp.run import exits
from tests.providers.anthropic_server import AnthropicServer
from tests.providers.canned import LLAMA_CPP, CannedServer, SilentServer, closed_port
from tests.providers.openai_server import OpenAIServer
from tests.providers.wire import Failure
from tests.support.cli import deepacp

KEY = "sk-echoed-canary-fedcba9876543210"


def run(tmp_path: Path, model: str, env: dict[str, str], config: str = "") -> tuple[str, str]:
    """(stdout, stderr) of `deepacp run --model MODEL hello`, which must fail as a provider
    error does (exit code 3)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config)
    env = {**os.environ, "DEEPACP_HOME": str(home), **env}
    result = deepacp("run", "--model", model, "hello", cwd=tmp_path, env=env)
    assert result.returncode == exits.PROVIDER, result.stderr
    return result.stdout, result.stderr


def lines(tmp_path: Path, first: str) -> str:
    log = tmp_path / "home" / "logs" / "deepacp.log"
    return f"deepacp: {first}\ndeepacp: the details are in {log}\n"


def test_a_refused_key_is_one_line_and_the_echoed_key_is_nowhere(tmp_path):
    with OpenAIServer([Failure(401, f"Incorrect API key provided: {KEY}")]) as server:
        env = {"OPENAI_BASE_URL": f"{server.base_url}/v1", "OPENAI_API_KEY": KEY}
        out, err = run(tmp_path, "openai:gpt-4.1", env)
    expected = "the API key for openai was refused: check OPENAI_API_KEY or run `deepacp setup`"
    assert (out, err) == ("", lines(tmp_path, expected))
    log = (tmp_path / "home" / "logs" / "deepacp.log").read_text()
    assert "Incorrect API key provided: [redacted]" in log and KEY not in log


def test_an_unknown_model_is_one_line(tmp_path):
    with AnthropicServer([Failure(404, "model: claude-sonet-4.5")]) as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": KEY}
        out, err = run(tmp_path, "anthropic:claude-sonet-4.5", env)
    expected = "no model 'claude-sonet-4.5' at anthropic: check --model"
    assert (out, err) == ("", lines(tmp_path, expected))


def test_a_closed_port_is_one_line_naming_the_url_and_its_variable(tmp_path):
    url = closed_port()
    out, err = run(tmp_path, "openai:gpt-4.1", {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": KEY})
    expected = f"cannot reach {url} (from OPENAI_BASE_URL): connection refused"
    assert (out, err) == ("", lines(tmp_path, expected))


def test_a_server_that_never_answers_is_a_timeout_asked_once(tmp_path):
    with SilentServer() as server:
        url = f"{server.base_url}/v1"
        env = {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": KEY}
        config = "[providers.openai]\nfirst_token_timeout = 1.5\n"
        out, err = run(tmp_path, "openai:gpt-4.1", env, config)
        assert server.requests == 1
    expected = (
        f"no answer from {url} after 1.5 s (the server may still be reading a long prompt): "
        "to wait longer, set first_token_timeout under [providers.openai] in config.toml"
    )
    assert (out, err) == ("", lines(tmp_path, expected))


def test_llama_cpp_context_overflow_is_one_line_with_the_sizes(tmp_path):
    with CannedServer(400, LLAMA_CPP) as server:
        env = {"OPENAI_BASE_URL": f"{server.base_url}/v1", "OPENAI_API_KEY": KEY}
        out, err = run(tmp_path, "openai:smollm2", env)
    expected = (
        "the model's context (2,048 tokens) is smaller than deepacp's prompt (3,654 tokens): "
        "raise the server's context size or use the compact profile"
    )
    assert (out, err) == ("", lines(tmp_path, expected))
