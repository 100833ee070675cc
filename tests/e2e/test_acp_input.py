"""Prompt content blocks, and malformed or hostile input on the raw wire."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.support.stdio import bare_stdio


class RawWire:
    """A bare JSON-RPC peer on the server's stdio, for input no SDK would send."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, message: dict) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def read(self) -> dict:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 20)
        assert line, "the server closed its output"
        return json.loads(line)

    async def read_reply(self) -> dict:
        """The next message that is not a notification (session updates come and go)."""
        while "method" in (message := await self.read()):
            pass
        return message

    async def read_until_id(self, request_id) -> dict:
        while True:
            message = await self.read()
            if message.get("id") == request_id and "method" not in message:
                return message


async def start_raw(tmp_path: Path) -> tuple[asyncio.subprocess.Process, RawWire, Path]:
    """`deepacp --stdio` on a bare wire, with a scripted model; and its workspace."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"content": "one"}, {"content": "two"}]}))
    workspace = tmp_path / "w"
    workspace.mkdir()
    process = await bare_stdio(tmp_path / "home", script, limit=2**26)
    return process, RawWire(process), workspace


async def stop_raw(process: asyncio.subprocess.Process) -> None:
    if process.stdin:
        process.stdin.close()
    await asyncio.wait_for(process.wait(), 10)
    assert process.returncode == 0


async def test_requests_before_initialize_are_answered_at_once(tmp_path: Path) -> None:
    process, wire, workspace = await start_raw(tmp_path)
    try:
        new = {"cwd": str(workspace), "mcpServers": []}
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new})
        reply = await wire.read()  # answered now, not held until initialize
        assert reply["id"] == 1 and reply["error"]["code"] == -32600
        assert "initialize" in reply["error"]["message"] and "data" not in reply["error"]
        # A notification before initialize is dropped: the next frame out answers initialize.
        cancel = {"sessionId": "ghost"}
        await wire.send({"jsonrpc": "2.0", "method": "session/cancel", "params": cancel})
        init = {"protocolVersion": 1}
        await wire.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": init})
        assert (await wire.read())["result"]["protocolVersion"] == 1
        await wire.send({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": new})
        assert (await wire.read_until_id(3))["result"]["sessionId"]
    finally:
        await stop_raw(process)


async def test_malformed_frames_get_errors_and_the_server_stays_up(tmp_path: Path) -> None:
    process, wire, workspace = await start_raw(tmp_path)
    try:
        await wire.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        )
        assert (await wire.read())["result"]["protocolVersion"] == 1
        await wire.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(workspace), "mcpServers": []},
            }
        )
        session = (await wire.read_until_id(2))["result"]["sessionId"]

        garbage: list[tuple[bytes, int, object]] = [
            (b"not json at all\n", -32700, None),
            (b"[1, 2, 3]\n", -32600, None),
            (b'"a string"\n', -32600, None),
            (b"\xff\xfe\x00 invalid utf-8\n", -32700, None),
            (b'{"jsonrpc": "2.0", "id": 7}\n', -32600, 7),
            (b'{"jsonrpc": "1.0", "id": 8, "method": "session/list"}\n', -32600, 8),
            (b'{"jsonrpc": "2.0", "id": 9, "method": 42}\n', -32600, 9),
            (b'{"jsonrpc": "2.0", "id": 10, "method": "session/list", "params": 5}\n', -32600, 10),
            (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/list"}\n', -32600, None),
        ]
        for frame, code, request_id in garbage:
            await wire.send_bytes(frame)
            reply = await wire.read_reply()
            assert reply["error"]["code"] == code, (frame, reply)
            assert reply["id"] == request_id
            assert reply["error"].get("data", "absent") is not None

        requests = [
            ({"jsonrpc": "2.0", "id": 20, "method": "no/such_method", "params": {}}, -32601),
            (
                {
                    "jsonrpc": "2.0",
                    "id": 21,
                    "method": "session/prompt",
                    "params": {"sessionId": "nope", "prompt": []},
                },
                -32002,
            ),
            (
                {
                    "jsonrpc": "2.0",
                    "id": 22,
                    "method": "session/prompt",
                    "params": {"sessionId": session},
                },
                -32602,
            ),
            ({"jsonrpc": "2.0", "id": 23, "method": "session/new", "params": {"cwd": 5}}, -32602),
            ({"jsonrpc": "2.0", "id": 24, "method": "session/load", "params": {}}, -32602),
            (
                {
                    "jsonrpc": "2.0",
                    "id": 25,
                    "method": "session/set_mode",
                    "params": {"sessionId": session, "modeId": "x"},
                },
                -32602,
            ),
            (
                {
                    "jsonrpc": "2.0",
                    "id": 26,
                    "method": "session/new",
                    "params": {"cwd": "/" + "x" * 100_000},
                },
                -32602,
            ),
        ]
        for request, code in requests:
            await wire.send(request)
            reply = await wire.read_until_id(request["id"])
            assert reply["error"]["code"] == code, (request["method"], reply)
            assert reply["error"].get("data", "absent") is not None  # CodeCompanion hangs on null

        huge = {
            "jsonrpc": "2.0",
            "id": 30,
            "method": "session/list",
            "params": {"cwd": "/" + "y" * 5_000_000},
        }
        await wire.send(huge)
        assert "result" in await wire.read_until_id(30)
        await wire.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "ghost"}}
        )
        await wire.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"id": 99}})

        # The session made before the storm still works.
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        await wire.send({"jsonrpc": "2.0", "id": 40, "method": "session/prompt", "params": prompt})
        assert (await wire.read_until_id(40))["result"]["stopReason"] == "end_turn"
        assert process.returncode is None
    finally:
        await stop_raw(process)
