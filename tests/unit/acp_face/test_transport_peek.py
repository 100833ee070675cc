"""A message looked at before the connection reads it (`StdioTransport.peek`) is still read,
once and in order, whether it had come in time or not."""

from __future__ import annotations

import asyncio
import json

import pytest

from deepacp.acp.transport import StdioTransport


def frames(*messages: dict) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def transport() -> tuple[StdioTransport, asyncio.StreamReader]:
    reader = asyncio.StreamReader()
    return StdioTransport(reader, None), reader  # type: ignore[arg-type]


async def test_a_peeked_message_is_received_once_and_in_order() -> None:
    incoming, reader = transport()
    first, second = {"jsonrpc": "2.0", "id": 1, "method": "a"}, {"jsonrpc": "2.0", "method": "b"}
    reader.feed_data(frames(first, second))
    reader.feed_eof()
    assert await incoming.peek(1) == first
    assert await incoming.peek(1) == first
    assert await incoming.receive() == first
    assert await incoming.receive() == second
    assert await incoming.receive() is None


async def test_a_message_late_for_a_peek_is_received_when_it_comes() -> None:
    incoming, reader = transport()
    with pytest.raises(TimeoutError):
        await incoming.peek(0.01)
    reader.feed_data(b'{"jsonrpc": "2.0", "id": 7, "meth')  # half a frame, then the rest
    with pytest.raises(TimeoutError):
        await incoming.peek(0.01)
    reader.feed_data(b'od": "session/new"}\n')
    reader.feed_eof()
    assert await incoming.receive() == {"jsonrpc": "2.0", "id": 7, "method": "session/new"}
    assert await incoming.receive() is None
