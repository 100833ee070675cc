"""Signing in: the auth methods `initialize` offers, `deepacp setup` (terminal auth) storing
a key that sessions then use, and `logout` forgetting it."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from acp import RequestError

from tests.e2e.openai_server import fake_openai
from tests.providers.openai_server import OpenAIServer

DEEPACP = str(Path(sys.executable).parent / "deepacp")
KEY = "sk-test-STORED-KEY-0123456789"
HERE = Path(__file__).parent
NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment: no model and no key configured, and no OS keyring unless the
    test gives one."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEEPACP_MODEL", None)
    return {**env, "DEEPACP_HOME": str(home), **NO_KEYRING, **extra}


def _controlling_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def run_in_terminal(argv: list[str], env: dict, answers: list[tuple[str, str]]) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal, as a client's terminal auth does; type each answer
    once its prompt shows. Returns the exit code and everything the terminal showed."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    shown, searched = b"", 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if answers and (at := shown.find(answers[0][0].encode(), searched)) != -1:
                prompt, answer = answers.pop(0)
                searched = at + len(prompt)
                os.write(master, answer.encode() + b"\n")
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                shown += data
            elif process.poll() is not None:
                break
        return process.wait(timeout=30), shown.decode(errors="replace")
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()


def run_piped(argv: list[str], env: dict, text: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=text, capture_output=True, text=True, env=env, timeout=60)


def accepting(env: dict[str, str], server: OpenAIServer) -> dict[str, str]:
    """`env` with OpenAI at `server`, which accepts `KEY` (setup checks the key there)."""
    server.keys = {KEY}
    return {**env, "OPENAI_BASE_URL": f"{server.base_url}/v1"}


async def session_reply(agent_factory, env: dict[str, str]) -> str:
    """Start `deepacp --stdio` as an editor would and return the reply to one prompt."""
    async with agent_factory([], env=env, home=Path(env["DEEPACP_HOME"])) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "hello")).stop_reason == "end_turn"
        return agent.client.text(session)


async def test_setup_in_a_terminal_stores_the_key_unseen_and_sessions_use_it(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    env = base_env(home)
    # The client adds the method's args to the command it runs deepacp with.
    with OpenAIServer() as checks:
        code, shown = run_in_terminal(
            [DEEPACP, "--stdio", "setup"],
            accepting(env, checks),
            [("Provider", "OpenAI"), ("API key", KEY)],
        )
    assert code == 0, shown
    assert "OpenAI" in shown  # the terminal echoes what is typed...
    assert KEY not in shown  # ...but not the key, and deepacp does not print it either
    assert "The key works" in shown and "Stored the openai API key" in shown
    stored = home / "credentials.json"
    assert stored.stat().st_mode & 0o777 == 0o600 and home.stat().st_mode & 0o777 == 0o700
    assert json.loads(stored.read_text()) == {"OPENAI_API_KEY": {"key": KEY}}
    assert 'model = "openai:gpt-5.1"' in (home / "config.toml").read_text()

    with fake_openai("Hello through the stored key.") as provider:
        run_env = {
            "DEEPACP_MODEL": "",
            "OPENAI_BASE_URL": provider.base_url,
            **NO_KEYRING,
        }
        assert await session_reply(agent_factory, {**env, **run_env}) == (
            "Hello through the stored key."
        )
        assert provider.keys and set(provider.keys) == {KEY}
        # A key in the environment wins over the stored one.
        await session_reply(agent_factory, {**env, **run_env, "OPENAI_API_KEY": "sk-from-env-99"})
        assert provider.keys[-1] == "sk-from-env-99"
    assert KEY not in (home / "logs" / "deepacp.log").read_text()


async def test_logout_forgets_the_stored_key(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    env = base_env(home)
    with OpenAIServer() as checks:
        assert (
            run_piped([DEEPACP, "setup"], accepting(env, checks), f"openai\n{KEY}\n").returncode
            == 0
        )
    with fake_openai("hi") as provider:
        agent_env = {**env, "DEEPACP_MODEL": "", "OPENAI_BASE_URL": provider.base_url}
        async with agent_factory([], env=agent_env, home=home) as agent:
            assert agent.info.agent_capabilities.auth.logout is not None  # advertised
            session = await agent.new_session()
            await agent.prompt(session, "hello")
            assert await agent.raw_request("logout", {}) == {}
            assert not (home / "credentials.json").exists()
    # OpenAI itself: a base URL on this machine is a local server, which needs no key.
    async with agent_factory([], env={**env, "DEEPACP_MODEL": ""}, home=home) as agent:
        with pytest.raises(RequestError) as info:
            await agent.new_session()
        assert "needs an API key" in str(info.value) and "deepacp setup" in str(info.value)


async def test_setup_prefers_a_usable_os_keyring(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    keyring_file = tmp_path / "os-keyring.json"
    env = base_env(
        home,
        PYTHON_KEYRING_BACKEND="keyring_backend.FileKeyring",
        TEST_KEYRING_FILE=str(keyring_file),
        PYTHONPATH=str(HERE),
    )
    with OpenAIServer() as checks:
        result = run_piped([DEEPACP, "setup"], accepting(env, checks), f"2\n{KEY}\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OS keyring" in result.stdout
    assert KEY not in result.stdout + result.stderr
    assert KEY not in (home / "credentials.json").read_text()  # only a pointer to the keyring
    assert json.loads(keyring_file.read_text()) == {"deepacp/OPENAI_API_KEY": KEY}
    with fake_openai("from the keyring") as provider:
        agent_env = {**env, "DEEPACP_MODEL": "", "OPENAI_BASE_URL": provider.base_url}
        assert await session_reply(agent_factory, agent_env) == "from the keyring"
        assert provider.keys[-1] == KEY
        async with agent_factory([], env=agent_env, home=home) as agent:
            await agent.raw_request("logout", {})
    assert json.loads(keyring_file.read_text()) == {}


def test_setup_without_a_key_stores_nothing(tmp_path) -> None:
    home = tmp_path / "home"
    result = run_piped([DEEPACP, "setup"], base_env(home), "anthropic\n\n")
    assert result.returncode == 1 and "nothing was stored" in result.stdout
    assert not (home / "credentials.json").exists()
    result = run_piped([DEEPACP, "setup"], base_env(home), "gemini\n")  # then input ends
    assert result.returncode == 1 and "Unknown provider 'gemini'" in result.stdout
