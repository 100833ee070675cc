"""deepacp against a real model server: llama.cpp's own server (xllamacpp) serving
SmolLM2-135M-Instruct on 127.0.0.1 (tests/support/llama.py), driven through `deepacp run`
and `deepacp --stdio` as a user with a local model would.

SmolLM2-135M cannot call tools: its chat template has no tool section, so the server drops
the tool definitions of every request (and deepacp says so). These tests check what a real
server does to the rest: the request it accepts, the stream, the end of the turn within the
output cap, usage, cancel, a context overflow, a first token slower than allowed. Tool calling
is covered by the validating wire servers (tests/providers/).

Each prompt is a few words and each answer is capped (`max_tokens`), so a test costs the
reading of deepacp's system prompt, which llama.cpp keeps cached between tests.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from pathlib import Path

import pytest
from acp import schema as S

from deepacp.server_facts import probe
from tests.support.acp import DEEPACP, start_agent
from tests.support.llama import GGUF, LlamaServer
from tests.support.waits import wait_for

pytestmark = pytest.mark.e2e  # the real binary, in a process of its own
MODEL = "openai:smollm2"  # llama.cpp's server answers for its one model whatever the name
CAP = 16
CONFIG = f"[providers.openai]\nmax_tokens = {CAP}\n"


def home_with(tmp_path: Path, config: str) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(config)
    return home


def run(
    tmp_path: Path, server: LlamaServer, prompt: str, config: str = CONFIG
) -> subprocess.CompletedProcess[str]:
    """`deepacp run --model openai:smollm2 PROMPT` against `server`."""
    home = home_with(tmp_path, config)
    return subprocess.run(
        [DEEPACP, "run", "--model", MODEL, prompt],
        cwd=tmp_path,
        env={**os.environ, "DEEPACP_HOME": str(home), **server.env()},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )


def dropped(server: LlamaServer) -> str:
    return (
        f"the server at {server.base_url} drops tool definitions (its chat template has no "
        "tools): deepacp cannot edit files or run commands with this model"
    )


def notes_only(server: LlamaServer, stdout: str) -> bool:
    """Whether `stdout` says nothing but the warning (which may come before a failure)."""
    return stdout in ("", f"note: {dropped(server)}\n")


def failure(tmp_path: Path, first: str) -> str:
    log = tmp_path / "home" / "logs" / "deepacp.log"
    return f"deepacp: {first}\ndeepacp: the details are in {log}\n"


def test_the_server_says_its_context_and_that_it_drops_tools(llama_server):
    facts = probe(llama_server.base_url, "smollm2")
    assert facts is not None
    assert (facts.context_length, facts.tools_supported) == (2048, False)
    assert facts.model_name is not None and facts.model_name.endswith(GGUF)


def test_run_answers_within_the_cap_and_warns_that_tools_are_dropped(tmp_path, llama_server):
    result = run(tmp_path, llama_server, "Say hello.")
    lines = result.stdout.splitlines()
    assert f"note: {dropped(llama_server)}" in lines, result
    stop = re.fullmatch(r"\[(end_turn|max_tokens); session \S+\]", lines[-1])
    assert stop is not None, result  # the model's own end, or the cap's: never runaway
    assert result.returncode == {"end_turn": 0, "max_tokens": 4}[stop[1]]
    answer = [line for line in lines[:-1] if not line.startswith("note: ")]
    assert "".join(answer).strip()  # the model said something


async def test_an_acp_turn_streams_ends_and_reports_usage(tmp_path, llama_server):
    home = home_with(tmp_path, CONFIG)
    env = {**llama_server.env(), "DEEPACP_MODEL": MODEL}
    async with start_agent(tmp_path, [], home=home, env=env, in_process=False) as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "Say hello.")
        await wait_for(lambda: dropped(llama_server) in agent.client.text(session))
    assert response.stop_reason in ("end_turn", "max_tokens")  # the model's end, or the cap's
    chunks = agent.client.of(S.AgentMessageChunk, session)
    assert len(chunks) > 2  # the warning, then the answer as it streamed
    usage = response.field_meta["deepacp"]["usage"]
    assert usage["inputTokens"] > 100 and 0 < usage["outputTokens"] <= CAP  # the cap held
    assert agent.client.of(S.UsageUpdate, session)


async def test_cancel_stops_the_servers_generation(tmp_path, llama_server):
    home = home_with(tmp_path, "[providers.openai]\nmax_tokens = 1500\n")
    env = {**llama_server.env(), "DEEPACP_MODEL": MODEL}
    async with start_agent(tmp_path, [], home=home, env=env, in_process=False) as agent:
        session = await agent.new_session()
        turn = agent.conn.prompt(
            session_id=session,
            prompt=[S.TextContentBlock(type="text", text="Write a very long story about a fox.")],
        )
        running = asyncio.ensure_future(turn)
        warned = dropped(llama_server)
        await wait_for(
            lambda: len(agent.client.text(session).replace(warned, "").strip()) > 0, 240
        )  # the model's first words: the server is generating
        assert llama_server.processing()
        await agent.conn.cancel(session_id=session)
        response = await running
        assert response.stop_reason == "cancelled"
        await wait_for(lambda: not llama_server.processing(), 20)


def test_a_small_context_gets_the_compact_profile_and_answers(tmp_path, llama_small_server):
    """The server's 512-token context, asked of it, chooses the compact profile: it fits."""
    result = run(tmp_path, llama_small_server, "Say hello.")
    stop = re.fullmatch(r"\[(end_turn|max_tokens); session \S+\]", result.stdout.splitlines()[-1])
    assert stop is not None and not result.stderr, result  # an answer (within the cap)


def test_an_overflow_is_one_readable_line(tmp_path, llama_small_server):
    """The whole harness (`profile = "default"`) does not fit in 512 tokens."""
    result = run(tmp_path, llama_small_server, "Say hello.", 'profile = "default"\n' + CONFIG)
    assert result.returncode == 3 and notes_only(llama_small_server, result.stdout), result
    line = result.stderr.splitlines()[0].removeprefix("deepacp: ")
    sizes = re.fullmatch(
        r"the model's context \(512 tokens\) is smaller than deepacp's prompt \(([\d,]+) "
        r"tokens\): raise the server's context size or use the compact profile",
        line,
    )
    assert sizes is not None, result.stderr
    assert result.stderr == failure(tmp_path, line)


def test_a_slow_first_token_is_a_timeout_asked_once(tmp_path, llama_server):
    """Last of the group: the server goes on reading the long prompt after deepacp gave up."""
    words = " ".join(f"w{n * 7919 % 10007}" for n in range(150))  # never read before
    config = CONFIG + "first_token_timeout = 0.2\n"
    result = run(tmp_path, llama_server, f"Count these: {words}", config)
    assert result.returncode == 3 and notes_only(llama_server, result.stdout), result  # no retry
    expected = (
        f"no answer from {llama_server.base_url} after 0.2 s (the server may still be reading "
        "a long prompt): to wait longer, set first_token_timeout under [providers.openai] in "
        "config.toml"
    )
    assert result.stderr == failure(tmp_path, expected)
