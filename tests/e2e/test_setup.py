"""`deepacp setup` as a user runs it, against local servers that answer like Anthropic,
OpenAI, Ollama and llama.cpp: a good key is checked and stored, a refused one never is, an
unreachable provider is said plainly, and a local server's models are offered."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.providers.anthropic_server import AnthropicServer
from tests.providers.ollama_server import OllamaServer
from tests.providers.openai_server import OpenAIServer

DEEPACP = str(Path(sys.executable).parent / "deepacp")
GOOD = "sk-ant-good-0123456789abcdef"
BAD = "sk-ant-wrong-0123456789abcdef"


def setup(home: Path, typed: str, **env: str) -> subprocess.CompletedProcess:
    """Run `deepacp setup` with `typed` as its input, as a user with no key or model yet."""
    user = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    for name in ("DEEPACP_MODEL", "OLLAMA_HOST"):
        user.pop(name, None)
    user |= {"DEEPACP_HOME": str(home), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    return subprocess.run(
        [DEEPACP, "setup"], input=typed, capture_output=True, text=True, env=user | env, timeout=60
    )


def stored(home: Path) -> dict:
    path = home / "credentials.json"
    return json.loads(path.read_text()) if path.exists() else {}


def config(home: Path) -> dict:
    path = home / "config.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_good_key_is_checked_then_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with AnthropicServer() as server:
        server.keys = {GOOD}
        result = setup(home, f"anthropic\n{GOOD}\n", ANTHROPIC_BASE_URL=server.base_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "The key works: anthropic lists 2 models for it." in result.stdout
    assert GOOD not in result.stdout + result.stderr
    [request] = server.requests
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["x-api-key"] == GOOD and request.headers["anthropic-version"]
    assert stored(home) == {"ANTHROPIC_API_KEY": {"key": GOOD}}
    assert config(home)["model"] == "anthropic:claude-sonnet-4-5"
    assert result.stdout.rstrip().endswith("Done: deepacp is ready for your editor.")


@pytest.mark.parametrize(
    ("provider", "refusal"),
    [
        ("anthropic", "the key was refused by anthropic: invalid x-api-key"),
        (
            "openai",
            "the key was refused by openai: Incorrect API key provided: sk-***cdef. You can "
            "find your API key at https://platform.openai.com/account/api-keys.",
        ),
    ],
)
def test_a_refused_key_is_one_line_and_never_stored(
    tmp_path: Path, provider: str, refusal: str
) -> None:
    home = tmp_path / "home"
    server = AnthropicServer() if provider == "anthropic" else OpenAIServer()
    url = server.base_url if provider == "anthropic" else f"{server.base_url}/v1"
    variable = f"{provider.upper()}_BASE_URL"
    with server:
        server.keys = {GOOD}
        refused = setup(home, f"{provider}\n{BAD}\n", **{variable: url})
        assert refused.returncode == 1
        assert refusal in refused.stdout.splitlines()
        assert "No key given; nothing was stored." in refused.stdout
        assert BAD not in refused.stdout + refused.stderr
        assert stored(home) == {} and config(home) == {}

        again = setup(home, f"{provider}\n{BAD}\n{GOOD}\n", **{variable: url})  # asked again
    assert again.returncode == 0, again.stdout + again.stderr
    assert refusal in again.stdout and "The key works" in again.stdout
    assert stored(home) == {f"{provider.upper()}_API_KEY": {"key": GOOD}}


def test_an_unreachable_provider_is_named_and_the_key_kept_only_if_asked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = f"http://127.0.0.1:{closed_port()}"
    said = (
        f"Could not check the key: cannot reach {url} (from ANTHROPIC_BASE_URL): connection refused"
    )
    declined = setup(home, f"anthropic\n{GOOD}\n\n", ANTHROPIC_BASE_URL=url)
    assert declined.returncode == 1
    assert said in declined.stdout.splitlines()
    assert "The key was not kept; nothing was stored." in declined.stdout
    assert stored(home) == {}

    kept = setup(home, f"anthropic\n{GOOD}\ny\n", ANTHROPIC_BASE_URL=url)
    assert kept.returncode == 0 and said in kept.stdout
    assert stored(home) == {"ANTHROPIC_API_KEY": {"key": GOOD}}


def test_a_local_ollama_lists_its_models_to_choose_from(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home).mkdir(mode=0o700)
    (home / "config.toml").write_text('# mine\n[providers.ollama]\nbase_url = "http://old:1"\n')
    models = {"qwen3-coder:latest": ("completion", "tools"), "llama3.2:latest": ("completion",)}
    with OllamaServer(models=models) as server:
        closed = f"http://127.0.0.1:{closed_port()}"
        result = setup(home, f"3\n{closed}\n{server.base_url}\n2\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"cannot reach {closed}: connection refused" in result.stdout  # then asked again
    assert f"Ollama answers at {server.base_url}." in result.stdout
    assert "Model: 1 qwen3-coder:latest, 2 llama3.2:latest [qwen3-coder:latest]: " in result.stdout
    assert config(home) == {
        "model": "ollama:llama3.2:latest",
        "providers": {"ollama": {"base_url": server.base_url}},
    }
    assert (home / "config.toml").read_text().startswith('model = "ollama:llama3.2:latest"\n# mine')
    assert stored(home) == {}  # no key asked for


def test_an_openai_compatible_local_server_needs_no_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAIServer() as server:  # as llama.cpp's server: /v1/models, no /api/tags
        server.listed = ["qwen2.5-coder-7b-instruct-q4_k_m.gguf"]
        result = setup(home, f"local\n{server.base_url}\n\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"An OpenAI-compatible server answers at {server.base_url}/v1." in result.stdout
    assert config(home) == {
        "model": "openai:qwen2.5-coder-7b-instruct-q4_k_m.gguf",
        "providers": {"openai": {"base_url": f"{server.base_url}/v1"}},
    }
    assert result.stdout.rstrip().endswith("Done: deepacp is ready for your editor.")


def test_a_gateway_that_echoes_the_key_never_shows_it(tmp_path: Path) -> None:
    home = tmp_path / "home"

    class Echo(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            said = f"key {self.headers['authorization'].split()[-1]} is not valid here"
            data = json.dumps({"error": {"message": said, "type": "invalid_request_error"}})
            self.send_response(401)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data.encode())

        def log_message(self, *args: object) -> None:
            pass

    gateway = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=gateway.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{gateway.server_address[1]}/v1"
        result = setup(home, f"openai\n{BAD}\n", OPENAI_BASE_URL=url)
    finally:
        gateway.shutdown()
    assert "the key was refused by openai: key [redacted] is not valid here" in result.stdout
    assert BAD not in result.stdout + result.stderr and stored(home) == {}


def test_in_a_terminal_a_refused_key_is_asked_again_unseen(tmp_path: Path) -> None:
    from tests.e2e.test_acp_auth import base_env, run_in_terminal

    home = tmp_path / "home"
    with AnthropicServer() as server:
        server.keys = {GOOD}
        env = base_env(home, ANTHROPIC_BASE_URL=server.base_url)
        answers = [("Provider", "anthropic"), ("API key", BAD), ("API key", GOOD)]
        code, shown = run_in_terminal([DEEPACP, "setup"], env, answers)
    assert code == 0, shown
    assert "the key was refused by anthropic: invalid x-api-key" in shown
    assert BAD not in shown and GOOD not in shown  # typed without echo, never printed
    assert stored(home) == {"ANTHROPIC_API_KEY": {"key": GOOD}}
