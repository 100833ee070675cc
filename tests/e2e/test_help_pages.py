"""What `deepacp logout` and a bad log level tell a user who has nothing but the installed
command (the help pages: tests/inprocess/test_help_pages.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.providers.anthropic_server import AnthropicServer

DEEPACP = str(Path(sys.executable).parent / "deepacp")
HERE = Path(__file__).resolve().parent
KEY = "sk-ant-logout-0123456789abcdef"


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment: no model and no key configured, no OS keyring."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEEPACP_MODEL", None)
    keyring = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    return {**env, "DEEPACP_HOME": str(home), **keyring, **extra}


def deepacp(
    *args: str, env: dict[str, str] | None = None, text: str = ""
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DEEPACP, *args], input=text, capture_output=True, text=True, env=env, timeout=120
    )


def setup_anthropic(env: dict[str, str]) -> subprocess.CompletedProcess:
    """`deepacp setup` storing `KEY`, which it checks at a local Anthropic that accepts it."""
    with AnthropicServer() as server:
        server.keys = {KEY}
        return deepacp(
            "setup", env={**env, "ANTHROPIC_BASE_URL": server.base_url}, text=f"anthropic\n{KEY}\n"
        )


def test_logout_forgets_what_setup_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = user_env(home)
    assert setup_anthropic(env).returncode == 0
    assert (home / "credentials.json").exists()

    forgot = deepacp("logout", env={**env, "ANTHROPIC_API_KEY": "sk-ant-from-env"})
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.splitlines() == [
        "Forgot the stored ANTHROPIC_API_KEY.",
        "Still set in the environment (yours to unset): ANTHROPIC_API_KEY.",
    ]
    assert not (home / "credentials.json").exists()
    assert 'model = "anthropic:' in (home / "config.toml").read_text()  # the model stays
    again = deepacp("logout", env=env)
    assert again.returncode == 0 and "nothing to forget" in again.stdout


def test_logout_forgets_a_key_in_the_keyring(tmp_path: Path) -> None:
    home, keyring_file = tmp_path / "home", tmp_path / "keyring.json"
    env = user_env(
        home,
        PYTHON_KEYRING_BACKEND="keyring_backend.FileKeyring",
        TEST_KEYRING_FILE=str(keyring_file),
        PYTHONPATH=str(HERE),
    )
    assert "OS keyring" in setup_anthropic(env).stdout
    assert json.loads(keyring_file.read_text()) == {"deepacp/ANTHROPIC_API_KEY": KEY}
    assert deepacp("logout", env=env).returncode == 0
    assert json.loads(keyring_file.read_text()) == {}


def test_an_unknown_log_level_is_one_warning_and_the_server_answers(tmp_path: Path) -> None:
    env = user_env(tmp_path / "home", DEEPACP_LOG_LEVEL="verbose")
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    result = deepacp("--stdio", env=env, text=json.dumps(request) + "\n")
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers and answers[0]["id"] == 0 and "result" in answers[0], result.stderr
    warnings = [line for line in result.stderr.splitlines() if "DEEPACP_LOG_LEVEL" in line]
    assert len(warnings) == 1 and "VERBOSE is not one of DEBUG, INFO" in warnings[0]
    assert "Traceback" not in result.stderr
