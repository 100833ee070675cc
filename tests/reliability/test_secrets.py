"""Secrets: canary API keys must not reach the model, the session store, the logs, a memory
file or an error message — wherever they come from: a command that prints the environment,
a file that holds a key, an MCP server that answers with one (ours, or a credential the
client gave only to that server), the user's own AGENTS.md, a model that writes one into
AGENTS.md, a provider error that echoes one (to the editor, or to the terminal of `deepacp run`)."""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from deepacp.backends.sandbox import sandbox_problem
from tests.providers.anthropic_server import AnthropicServer
from tests.providers.wire import Failure
from tests.support.acp import DEEPACP
from tests.support.reliability import MCP_SERVER, notes_server

pytestmark = pytest.mark.e2e

ANTHROPIC = "sk-ant-canary-" + secrets.token_hex(16)
GITHUB = "ghp_canary" + secrets.token_hex(12)
SERVICE = "svc_canary" + secrets.token_hex(12)  # only in the MCP server's config, not ours
CANARIES = (ANTHROPIC, GITHUB, SERVICE)


def leaks(data: bytes | str) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [c[:16] for c in CANARIES if c in text]


async def test_canary_keys_never_leave_the_environment(agent_factory, model_requests, tally):
    t = tally("secrets")
    env_dump = (
        "env; tr '\\0' '\\n' < /proc/$PPID/environ; echo A=$ANTHROPIC_API_KEY G=$GITHUB_TOKEN"
    )
    turns = [
        {
            "tool_calls": [
                {"id": "env", "name": "execute", "args": {"command": env_dump}},
                {"id": "file", "name": "read_file", "args": {"file_path": "deploy.env"}},
                {"id": "grep", "name": "grep", "args": {"pattern": "TOKEN="}},
                {"id": "mcp", "name": "notes_env_value", "args": {"name": "ANTHROPIC_API_KEY"}},
                {"id": "mcp2", "name": "notes_env_value", "args": {"name": "SERVICE_TOKEN"}},
            ]
        },
        {  # a model that learned a key anyway and tries to remember it
            "tool_calls": [
                {
                    "id": "memory",
                    "name": "write_file",
                    "args": {"file_path": "AGENTS.md", "content": f"- deploy key: {GITHUB}\n"},
                }
            ],
            "content": f"The key is {ANTHROPIC}.",
        },
        {"content": "done"},
        {
            "error": f"401 invalid x-api-key {ANTHROPIC}",
            "error_type": "auth",
        },  # a provider echoing the key
        {"content": "still here"},
    ]
    env = {"ANTHROPIC_API_KEY": ANTHROPIC, "GITHUB_TOKEN": GITHUB, "DEEPACP_LOG_LEVEL": "DEBUG"}
    async with agent_factory(turns, env=env) as agent:
        (agent.workspace / "deploy.env").write_text(f"GITHUB_TOKEN={GITHUB}\n")
        user_memory = agent.home / "AGENTS.md"  # a key the user once wrote into their memory
        agent.home.mkdir(parents=True, exist_ok=True)
        user_memory.write_text(f"- my token is {GITHUB}\n")
        mcp = notes_server(ANTHROPIC_API_KEY=ANTHROPIC, SERVICE_TOKEN=SERVICE)
        new = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[mcp])
        session = new.session_id
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert (await agent.prompt(session, "look around")).stop_reason == "end_turn"
        with pytest.raises(RequestError) as failed:
            await agent.prompt(session, "again")
        error = json.dumps(failed.value.to_error_obj())
        assert (await agent.prompt(session, "and again")).stop_reason == "end_turn"
        home, workspace = agent.home, agent.workspace

    requests = model_requests()
    results = {
        m["tool_call_id"]: m["content"] for m in requests[1]["messages"] if m["type"] == "tool"
    }
    # Each source really produced its secret, which the model saw redacted.
    assert "- my token is [redacted]" in requests[0]["system"]
    # Commands run without the secrets; the server's own environment shows them redacted.
    assert "A= G=" in results["env"]
    if sandbox_problem() is None:  # $PPID is the sandbox's first process: nothing to read
        assert "ANTHROPIC_API_KEY" not in results["env"]
    else:  # deepacp itself, whose environment is read and then redacted
        assert "ANTHROPIC_API_KEY=[redacted]" in results["env"]
    for source in ("file", "grep", "mcp", "mcp2"):
        assert "[redacted]" in results[source], (source, results[source])
    t.record(not leaks(json.dumps(requests)), "the model saw a key")
    t.record(not leaks(error), f"the error message: {error}")
    assert "401 invalid x-api-key [redacted]" in error
    assert home.stat().st_mode & 0o077 == 0, "the session store is readable by other users"
    stored = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name == "checkpoints.db" for p in stored) and any(
        p.suffix == ".log" for p in stored
    )
    for path in stored:
        if path == user_memory:
            continue
        t.record(not leaks(path.read_bytes()), f"{path.relative_to(home)} holds a key")
    memory = workspace / "AGENTS.md"
    assert memory.exists(), "the memory write was made (with the key redacted)"
    for path in workspace.rglob("*"):
        if path.is_file() and path.name != "deploy.env":
            t.record(not leaks(path.read_bytes()), f"{path.relative_to(workspace)} holds a key")
    t.check()


DB_PASSWORD = "dbpw-canary-" + secrets.token_hex(8)
MYSQL = "mysql-canary-" + secrets.token_hex(8)
MORE = (DB_PASSWORD, MYSQL)


async def test_secrets_in_live_chunks_urls_clips_stderr_and_commands(
    agent_factory, model_requests, tally, tmp_path
) -> None:
    t = tally("secrets: live chunks, URL passwords, clipped lines, MCP stderr, commands")
    clipped = "x" * 1990 + GITHUB + " tail\n"  # read_file clips lines at 2000 characters
    encoded = "printenv GITHUB_TOKEN | base64; echo U=$DATABASE_URL P=$MYSQL_PWD"
    # Command output keeps its first and last 500,000 characters: the key straddles the cut.
    fill = "head -c {} /dev/zero | tr '\\0' {}"
    cut_through_the_key = f"{fill.format(499_980, 'x')}; cat key.txt; {fill.format(600_000, 'y')}"
    turns = [
        {
            "reasoning": f"I found {ANTHROPIC} in the env",
            "content": f"Your key is {ANTHROPIC} and the db password is {DB_PASSWORD}.",
            "tool_calls": [
                {"id": "clip", "name": "read_file", "args": {"file_path": "long.txt"}},
                {"id": "cmd", "name": "execute", "args": {"command": encoded}},
                {"id": "dsn", "name": "read_file", "args": {"file_path": "settings.ini"}},
                {"id": "cut", "name": "execute", "args": {"command": cut_through_the_key}},
            ],
        },
        {"content": "done"},
    ]
    stderr = tmp_path / "server-stderr.txt"
    command = ("sh", "-c", 'exec "$0" --stdio 2>"$1"', DEEPACP, str(stderr))
    env = {
        "ANTHROPIC_API_KEY": ANTHROPIC,
        "GITHUB_TOKEN": GITHUB,
        "DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db.internal:5432/app",
        "MYSQL_PWD": MYSQL,
    }
    async with agent_factory(turns, env=env, command=command) as agent:
        (agent.workspace / "long.txt").write_text(clipped)
        (agent.workspace / "settings.ini").write_text(f"password = {DB_PASSWORD}\n{MYSQL}\n")
        (agent.workspace / "key.txt").write_text(GITHUB)
        noisy = S.McpServerStdio(
            name="noisy",
            command="sh",
            args=[
                "-c",
                'echo "noisy: my token is $SERVICE_TOKEN" >&2; exec "$0" "$1"',
                sys.executable,
                MCP_SERVER,
            ],
            env=[S.EnvVariable(name="SERVICE_TOKEN", value=SERVICE)],
        )
        new = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[noisy])
        await agent.conn.set_session_mode(session_id=new.session_id, mode_id="yolo")
        assert (await agent.prompt(new.session_id, "look")).stop_reason == "end_turn"
        live = "".join(
            u.content.text
            for kind in (S.AgentMessageChunk, S.AgentThoughtChunk)
            for u in agent.client.of(kind)
        )
        home = agent.home
    everything = (*CANARIES, *MORE)

    def found(text: str) -> list[str]:
        return [c[:16] for c in everything if c in text or c[:16] in text]

    t.record("[redacted]" in live, f"the live text was not redacted: {live[:200]}")
    t.record(not found(live), f"the editor saw {found(live)} live")
    request = json.dumps(model_requests())
    t.record(not found(request), f"the model saw {found(request)}")
    t.record(GITHUB[:12] not in request, "a clipped key left its prefix")
    b64 = base64.b64encode(GITHUB.encode()).decode()[:16]
    t.record(b64 not in request, "the command read the token from its environment")
    t.record("U= P=" in request, "the command saw the database password variables")
    errors = stderr.read_text()
    t.record("noisy: my token is" in errors, "the MCP server's stderr is not shown at all")
    t.record(not found(errors), f"deepacp's stderr holds {found(errors)}")
    for path in (p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes().decode("utf-8", "replace")
        t.record(not found(data), f"{path.relative_to(home)} holds {found(data)}")
    t.check()


def test_a_headless_run_prints_a_provider_error_without_the_key_it_echoes(tmp_path: Path):
    home = tmp_path / "home"
    with AnthropicServer([Failure(401, f"invalid x-api-key {ANTHROPIC}")]) as provider:
        env = {
            **os.environ,
            "DEEPACP_HOME": str(home),
            "ANTHROPIC_BASE_URL": provider.base_url,
            "ANTHROPIC_API_KEY": ANTHROPIC,
        }
        result = subprocess.run(
            [DEEPACP, "run", "--model", "anthropic:claude-sonnet-4-5", "hello"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    terminal = result.stdout + result.stderr
    assert not leaks(terminal), terminal
    assert "Traceback" not in terminal, terminal
    assert result.stderr.startswith("deepacp: the API key for anthropic was refused: ")
    log = home / "logs" / "deepacp.log"
    assert result.stderr.endswith(f"deepacp: the details are in {log}\n"), result.stderr
    assert result.returncode == 3  # a provider's error (deepacp.run.exits.PROVIDER)
    written = log.read_text()
    assert "Traceback" in written and "invalid x-api-key [redacted]" in written
    assert not leaks(written)
