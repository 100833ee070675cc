"""Resources a server must not lose hold of: turns (two prompts racing queue up), descriptors (one
per session forever), processes (commands outliving the server), a start-up that waits on
an MCP server forever, and a model message that starts a thousand commands at once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from deepacp.backends.shell import MAX_PARALLEL_COMMANDS
from tests.support.acp import DEEPACP
from tests.support.lsp import lsp_frame
from tests.support.reliability import size
from tests.support.waits import marked, marked_pids, pid_alive, wait_for

ROGUE_MCP = str(Path(__file__).with_name("rogue_mcp.py"))
MARK = uuid.uuid4().hex
PID_COMMAND = marked("sleep 60 & sleep 60; echo done > ran", MARK)
"""A shell, its background child and the sleep it waits on: found by their mark from
outside the sandbox's PID namespace, where `$$` means nothing."""


async def test_two_prompts_sent_together_run_one_after_the_other(
    agent_factory, model_requests, tally
) -> None:
    t = tally("resources: one turn at a time")
    rounds = size(3, 30)
    turns = [{"content": f"answer {n}", "delay_ms": 20} for n in range(2 * rounds)]
    async with agent_factory(turns) as agent:
        for n in range(rounds):
            session = await agent.new_session()  # fresh: the first turn builds the graph
            results = await asyncio.gather(
                agent.prompt(session, f"first {n}"),
                agent.prompt(session, f"second {n}"),
                return_exceptions=True,
            )
            ended = [r for r in results if isinstance(r, S.PromptResponse)]
            t.record([r.stop_reason for r in ended] == ["end_turn"] * 2, f"round {n}: {results}")
            # The second queued behind the first: its request holds the first turn whole.
            later = [(m["type"], m["content"]) for m in model_requests()[-1]["messages"]]
            t.record(
                later[0] == ("human", f"first {n}")
                and later[1][0] == "ai"
                and later[2] == ("human", f"second {n}"),
                f"round {n}: the turns overlapped: {later}",
            )
    t.check()


@pytest.mark.e2e
async def test_forgotten_sessions_do_not_exhaust_descriptors(agent_factory, tally) -> None:
    t = tally("resources: descriptors per open session")
    limit = 128
    sessions = size(limit + 60, 1200)
    command = ("sh", "-c", f'ulimit -n {limit} && exec "$0" --stdio', DEEPACP)
    async with agent_factory([{"content": "first"}, {"content": "last"}], command=command) as a:
        opened = []
        for n in range(sessions):
            try:
                opened.append(await a.new_session())
            except RequestError as exc:
                t.record(False, f"session {n}: {exc}")
                break
        t.record(len(opened) == sessions, f"{len(opened)} of {sessions} sessions opened")
        for session in (opened[0], opened[-1]):
            try:
                response = await a.prompt(session, "hello")
                t.record(response.stop_reason == "end_turn", f"prompt: {response.stop_reason}")
            except RequestError as exc:
                t.record(False, f"prompt failed: {exc}")
        held = len(os.listdir(f"/proc/{a.process.pid}/fd"))
        t.record(held < limit // 2, f"the server holds {held} descriptors")
        t.figures["descriptors_after_sessions"] = held
    t.check()


async def wait_for_command(mark: str = MARK) -> list[int]:
    await wait_for(lambda: len(marked_pids(mark)) >= 2, 20)
    return marked_pids(mark)


async def all_dead(pids: list[int], within: float = 5.0) -> bool:
    try:
        await wait_for(lambda: not any(map(pid_alive, pids)), within)
    except AssertionError:
        for pid in pids:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        return False
    return True


@pytest.mark.e2e
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP, signal.SIGTERM], ids=str)
async def test_commands_die_with_the_acp_server(agent_factory, tally, how) -> None:
    t = tally("resources: commands die with the server")
    turns = [{"tool_calls": [{"id": "c", "name": "execute", "args": {"command": PID_COMMAND}}]}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        turn = asyncio.create_task(agent.prompt(session, "run it"))
        pids = await wait_for_command()
        os.kill(agent.process.pid, how)
        try:
            await asyncio.wait_for(agent.process.wait(), 10)
            t.record(True, "the server exited")
        except TimeoutError:
            t.record(False, f"the server ignored {how.name}")
            agent.process.kill()
        t.record(await all_dead(pids), f"{how.name}: the command outlived the server")
        turn.cancel()
        t.record(not (agent.workspace / "ran").exists(), "the command finished its work")
    t.check()


@pytest.mark.e2e
def hangup_as_an_editor_leaves_it() -> None:
    """SIGHUP as a terminal's editor leaves it to the server: default and not blocked,
    whatever the test worker that starts it has done with it."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})


def signal_state(pid: int) -> str:
    """How process `pid` stands toward signals (for a failure to say why it lives on)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as exc:
        return f"no /proc entry ({exc.strerror})"
    keep = ("State:", "SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:")
    return "; ".join(line for line in lines if line.startswith(keep))


def running_pid_command(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A workspace, a script whose one turn runs PID_COMMAND there, and an environment
    with a home of its own, for a `deepacp` process started by the test."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    call = {"id": "c", "name": "execute", "args": {"command": PID_COMMAND}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [call]}]}))
    return workspace, script, {**os.environ, "DEEPACP_HOME": str(tmp_path / "home")}


@pytest.mark.parametrize("how", [signal.SIGHUP, signal.SIGTERM], ids=str)
async def test_commands_die_with_deepacp_run(tally, tmp_path: Path, how) -> None:
    t = tally("resources: commands die with the server")
    workspace, script, env = running_pid_command(tmp_path)
    process = await asyncio.create_subprocess_exec(
        DEEPACP,
        "run",
        "--cwd",
        str(workspace),
        "--model",
        f"scripted:{script}",
        "--mode",
        "yolo",
        "go",
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    pids = await wait_for_command()
    process.send_signal(how)
    try:
        code = await asyncio.wait_for(process.wait(), 10)
        t.record(code != 0, f"deepacp run exited {code} after {how.name}")
    except TimeoutError:
        t.record(False, f"deepacp run ignored {how.name}")
        process.kill()
    t.record(await all_dead(pids), f"{how.name}: the command outlived deepacp run")
    t.record(not (workspace / "ran").exists(), "the command finished its work")
    t.check()


@pytest.mark.e2e
async def test_commands_die_with_the_lsp_server(tally, tmp_path: Path) -> None:
    t = tally("resources: commands die with the server")
    workspace, script, env = running_pid_command(tmp_path)
    (workspace / "a.py").write_text("x = 1\n")
    process = await asyncio.create_subprocess_exec(
        DEEPACP,
        "lsp",
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        preexec_fn=hangup_as_an_editor_leaves_it,
    )
    assert process.stdin is not None
    options = {"model": f"scripted:{script}", "shell": "allow"}
    messages = [
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {},
                "initializationOptions": options,
            },
        },
        {"method": "initialized", "params": {}},
        {
            "id": 2,
            "method": "workspace/executeCommand",
            "params": {
                "command": "deepacp.edit",
                "arguments": [{"uri": (workspace / "a.py").as_uri(), "instruction": "go"}],
            },
        },
    ]
    for message in messages:
        process.stdin.write(lsp_frame(json.dumps({"jsonrpc": "2.0", **message}).encode()))
    await process.stdin.drain()
    pids = await wait_for_command()
    process.send_signal(signal.SIGHUP)
    try:
        await asyncio.wait_for(process.wait(), 10)
        t.record(True, "the server exited")
    except TimeoutError:
        t.record(False, f"deepacp lsp ignored SIGHUP: {signal_state(process.pid)}")
        process.kill()
    t.record(await all_dead(pids), "SIGHUP: the command outlived deepacp lsp")
    t.check()


async def test_an_mcp_server_that_never_lists_its_tools(agent_factory, tally) -> None:
    t = tally("resources: MCP start-up bounded, cancel while waiting")
    hanging = S.McpServerStdio(
        name="hang", command=sys.executable, args=[ROGUE_MCP, "hang"], env=[]
    )
    env = {"DEEPACP_MCP_TIMEOUT": "1.5"}
    async with agent_factory([{"content": "answered"}] * 2, env=env) as agent:
        # Cancel while the turn waits for the server.
        new = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[hanging])
        turn = asyncio.create_task(agent.prompt(new.session_id, "hello"))
        await asyncio.sleep(0.5)
        await agent.conn.cancel(session_id=new.session_id)
        try:
            response = await asyncio.wait_for(turn, 2)
            t.record(response.stop_reason == "cancelled", f"answered {response.stop_reason}")
        except TimeoutError:
            t.record(False, "cancel did nothing while the turn waited for MCP")
            turn.cancel()
        # Without a cancel, the server is left out once the start-up time is up.
        started = time.monotonic()
        try:
            response = await asyncio.wait_for(agent.prompt(new.session_id, "again"), 10)
            t.record(response.stop_reason == "end_turn", f"answered {response.stop_reason}")
        except TimeoutError:
            t.record(False, "the prompt waited for the MCP server forever")
        t.figures["mcp_left_out_after_s"] = round(time.monotonic() - started, 1)
        notices = [
            u.content.text
            for u in agent.client.of(S.AgentMessageChunk, new.session_id)
            if "hang" in u.content.text
        ]
        t.record(any("not available" in n for n in notices), f"no notice: {notices}")
    t.check()


async def test_one_message_cannot_start_a_thousand_commands_at_once(agent_factory, tally) -> None:
    t = tally("resources: concurrent commands from one message")
    count = size(40, 1000)
    command = "echo s >> log; sleep 0.2; echo e >> log  # {}"  # each its own: no loop
    calls = [
        {"id": f"c{i}", "name": "execute", "args": {"command": command.format(i)}}
        for i in range(count)
    ]
    async with agent_factory([{"tool_calls": calls}, {"content": "done"}]) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        response = await agent.prompt(session, "run them all")
        t.record(response.stop_reason == "end_turn", response.stop_reason)
        running = peak = 0
        events = (agent.workspace / "log").read_text().split()
        for event in events:
            running += 1 if event == "s" else -1
            peak = max(peak, running)
        t.record(events.count("s") == count, f"{events.count('s')} of {count} ran")
        t.record(peak <= MAX_PARALLEL_COMMANDS, f"{peak} commands ran at once")
        t.figures["peak_concurrent_commands"] = peak
    t.check()
