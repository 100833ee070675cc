"""Messages sent in one go leave together, in order, and none is lost at close."""

from __future__ import annotations

import asyncio
import json

from deepacp.acp.transport import FLUSH_BYTES, StdioTransport


class Writer:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True


def transport() -> tuple[StdioTransport, Writer]:
    writer = Writer()
    return StdioTransport(asyncio.StreamReader(), writer), writer  # type: ignore[arg-type]


def lines(writer: Writer) -> list[dict]:
    return [json.loads(line) for line in b"".join(writer.writes).splitlines()]


async def test_a_replay_leaves_in_few_writes_and_in_order() -> None:
    sent, writer = transport()
    updates = [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"n": i}} for i in range(3000)
    ]
    for update in updates:
        await sent.send(update)
    await asyncio.sleep(0)
    assert lines(writer) == updates
    assert len(writer.writes) <= len(b"".join(writer.writes)) // FLUSH_BYTES + 1


async def test_a_lone_message_leaves_without_waiting_for_more() -> None:
    sent, writer = transport()
    await sent.send({"jsonrpc": "2.0", "id": 1, "result": {}})
    await asyncio.sleep(0)
    assert lines(writer) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


async def test_close_writes_what_was_sent() -> None:
    sent, writer = transport()
    await sent.send({"jsonrpc": "2.0", "id": 1, "result": {"last": True}})
    await sent.close()
    assert writer.closed and lines(writer) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"last": True}}
    ]
