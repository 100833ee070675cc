"""Bounds a hostile or broken client cannot overrun, over the real `deepacp --stdio`: the
prompts one session queues, and the size of one frame. Each is refused with an error that
names the limit; the server keeps its memory and answers the next request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError

from deepacp.acp.frames import MAX_FRAME_BYTES
from deepacp.session.core import QUEUED
from deepacp.session.turns.queue import MAX_WAITING
from tests.support.acp import RecordingClient, write_script
from tests.support.stdio import bare_stdio
from tests.support.waits import wait_for

pytestmark = pytest.mark.e2e

FLOOD = 2000
PROMPT = "q" * 50_000
RSS_GROWTH_LIMIT_MB = 50
"""The flood is 100 MB of prompts: a server that keeps them all grows by more than that."""
HELD = {"tool_calls": [{"id": "held", "name": "execute", "args": {"command": "true"}}]}
READ = {"tool_calls": [{"id": "read", "name": "read_file", "args": {"file_path": "a.txt"}}]}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


async def test_a_flood_of_queued_prompts_is_refused_past_the_limit(agent_factory) -> None:
    release = asyncio.Event()
    client = RecordingClient()

    async def hold(_request) -> None:  # the turn waits on its permission question
        await release.wait()

    client.on_permission = hold
    async with agent_factory([HELD, {"content": "after the cancel"}], client=client) as agent:
        session = await agent.new_session()
        running = asyncio.create_task(agent.prompt(session, "run it"))
        await wait_for(lambda: client.permission_requests, 60)
        before = rss_mb(agent.process.pid)
        flood = [asyncio.create_task(agent.prompt(session, PROMPT)) for _ in range(FLOOD)]
        answered = lambda: sum(t.done() for t in flood) + client.text().count(QUEUED)  # noqa: E731
        await wait_for(lambda: answered() == FLOOD, 120)  # refused, or told it waits
        grown = rss_mb(agent.process.pid) - before
        refused = [t.exception() for t in flood if t.done()]
        assert all(isinstance(e, RequestError) for e in refused)
        assert {str(e) for e in refused} == {
            f"{MAX_WAITING} prompts already wait in this session, the most it queues: "
            "send this one when the turn ends, or cancel the turn"
        }
        assert client.text().count(QUEUED) == MAX_WAITING
        assert grown < RSS_GROWTH_LIMIT_MB, f"the server grew {grown:.0f} MB"
        assert await agent.new_session()  # the server answers meanwhile
        await agent.conn.cancel(session_id=session)
        release.set()
        waited = [t for t in flood if not t.done()]
        answers = await asyncio.wait_for(asyncio.gather(running, *waited), 30)
        assert [a.stop_reason for a in answers] == ["cancelled"] * (MAX_WAITING + 1)
        after = await agent.prompt(session, "again")  # nothing is left waiting
        assert after.stop_reason == "end_turn" and "after the cancel" in client.text()


class Peer:
    """A bare client on the server's stdio: it writes frames no SDK would."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def next_message(self) -> dict:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)
        assert line, "the server closed its output"
        return json.loads(line)

    async def request_from_server(self, method: str) -> dict:
        while (message := await self.next_message()).get("method") != method:
            pass
        return message

    async def answer(self, request_id: int) -> dict:
        """The server's answer to our request `request_id` (notifications pass by)."""
        while True:
            message = await self.next_message()
            assert "id" not in message or "method" not in message, f"instead: {message}"
            if message.get("id") == request_id:
                return message


@pytest.fixture
async def peer(tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("small on disk\n")
    script = write_script(
        tmp_path / "script.json",
        [READ, {"content": "read it"}, {"content": "still here"}],
        record=str(tmp_path / "requests.jsonl"),
    )
    process = await bare_stdio(tmp_path / "home", script, cwd=workspace)
    wire = Peer(process)
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": False}
    init = {"protocolVersion": 1, "clientCapabilities": capabilities}
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    assert "result" in await wire.answer(1)
    yield wire, workspace, tmp_path / "requests.jsonl"
    assert process.stdin is not None
    process.stdin.close()
    await asyncio.wait_for(process.wait(), 30)


async def test_an_oversized_frame_is_refused_under_its_id_and_the_server_goes_on(peer) -> None:
    wire, workspace, requests = peer
    new = {"cwd": str(workspace), "mcpServers": []}
    await wire.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new})
    session = (await wire.answer(2))["result"]["sessionId"]
    pasted = [{"type": "text", "text": "o" * (MAX_FRAME_BYTES + 1024)}]
    prompt = {"sessionId": session, "prompt": pasted}
    await wire.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    refused = await wire.answer(3)
    assert refused["error"]["code"] == -32600
    assert f"over the {MAX_FRAME_BYTES >> 20} MiB a message may be" in refused["error"]["message"]

    # The editor answers a read for the agent with more than a frame may hold: the read
    # fails with that error, the turn goes on.
    ask = {"sessionId": session, "prompt": [{"type": "text", "text": "read a.txt"}]}
    await wire.send({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": ask})
    read = await wire.request_from_server("fs/read_text_file")
    huge = {"content": "a" * (MAX_FRAME_BYTES + 1024)}
    await wire.send({"jsonrpc": "2.0", "id": read["id"], "result": huge})
    assert (await wire.answer(4))["result"]["stopReason"] == "end_turn"
    told = [json.loads(line) for line in requests.read_text().splitlines()][-1]
    [result] = [m["content"] for m in told["messages"] if m["type"] == "tool"]
    assert "the editor could not read a.txt: the client's answer is 16.0 MiB" in result

    await wire.send({"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}})
    assert [s["sessionId"] for s in (await wire.answer(5))["result"]["sessions"]] == [session]
