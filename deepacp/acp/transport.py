"""Newline-delimited JSON-RPC over stdio, with the guards the ACP SDK lacks.

Malformed frames get a JSON-RPC error (`id: null` when no id can be read) instead of
killing the connection: invalid JSON or UTF-8 or nesting too deep to parse (-32700), a
frame that is not an object or not a valid envelope (-32600), a frame over the size limit
(-32600, skipped unread; under the frame's own id where its head shows it: `frames.py`).
An error object never carries `"data": null` (the SDK writes one for every error without
data; some clients index `error.data` and hang on null).
Implements the SDK's message-level `Transport` (send / receive / close) without importing it.
Messages sent in one go (a replay of thousands of updates) leave in one write per
`FLUSH_BYTES`, not a system call each; a lone message leaves when the event loop next runs,
a response at once (with what was sent before it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any

from deepacp.acp.early import encode
from deepacp.acp.frames import HEAD_BYTES, MAX_FRAME_BYTES, Oversized

log = logging.getLogger(__name__)

_READ_CHUNK = 1 << 20
FLUSH_BYTES = 1 << 16
"""Messages sent at once go out together up to this size (then the writer is drained)."""


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def envelope_problem(message: dict) -> str | None:
    """Why a decoded object is not a JSON-RPC 2.0 request, notification or response."""
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message:
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
            return "id must be a string, an integer or null"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "method must be a string"
        if "params" in message and not isinstance(message["params"], dict | list | None):
            return "params must be an object or an array"
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return "not a request, a notification or a response"


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: Any
) -> None:
    def pump() -> None:
        while data := source.read1(_READ_CHUNK):
            loop.call_soon_threadsafe(reader.feed_data, data)
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="deepacp-stdin", daemon=True).start()


class _FileWriter:
    """The StreamWriter methods the transport uses, over a blocking file."""

    def __init__(self, file: Any) -> None:
        self.file = file

    def write(self, data: bytes) -> None:
        self.file.write(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self.file.close()


class StdioTransport:
    """Message transport over a byte reader and a byte writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._flush_soon = False
        self.answered: Callable[[], None] | None = None
        """Called after each response is written."""
        self._next: asyncio.Task[dict | None] | None = None
        """The next message, being read or read already (`peek`)."""

    @classmethod
    async def open_stdio(cls, read: bytes = b"") -> StdioTransport:
        """Bind to this process's stdin/stdout (`read`: what was read from stdin already,
        read first). Anything else that writes to fd 1 later (a library's print, a child
        process) is sent to stderr instead of the protocol."""
        loop = asyncio.get_running_loop()
        protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        sys.stdout = sys.stderr
        reader = asyncio.StreamReader(limit=_READ_CHUNK)
        if read:
            reader.feed_data(read)
        mode = os.fstat(sys.stdin.fileno()).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        else:  # a file, /dev/null or a terminal: the event loop cannot poll it, a thread can
            from deepacp.stdio import stdin_reader

            _feed_from_thread(loop, reader, stdin_reader())
        try:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, protocol_out
            )
            writer: Any = asyncio.StreamWriter(transport, protocol, None, loop)
        except ValueError:  # stdout is a regular file: plain blocking writes are fine
            writer = _FileWriter(protocol_out)
        return cls(reader, writer)

    async def send(self, message: dict) -> None:
        error = message.get("error")
        if isinstance(error, dict) and "data" in error and error["data"] is None:
            message = {**message, "error": {k: v for k, v in error.items() if k != "data"}}
        data = encode(message)
        async with self._lock:
            if self._closed:
                raise ConnectionError("transport closed")
            self._pending.append(data)
            self._pending_bytes += len(data)
            if "method" not in message:  # a response: the client waits for it
                self._flush()
                if self.answered is not None:
                    self.answered()
                await self._writer.drain()
            elif self._pending_bytes >= FLUSH_BYTES:
                self._flush()
                await self._writer.drain()
            elif not self._flush_soon:
                self._flush_soon = True
                asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write what was sent and not yet written, in one write."""
        self._flush_soon = False
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending, self._pending_bytes = [], 0
        try:
            self._writer.write(data)
        except OSError as exc:  # the client went away: the reader sees it end
            log.info("could not write to the client: %s", exc)

    async def peek(self, timeout: float | None = None) -> dict | None:
        """The next message, left to `receive` (None: the input ended); TimeoutError if
        none came within `timeout` seconds (it is still read, and `receive` gets it)."""
        if self._next is None:
            self._next = asyncio.ensure_future(self._receive())
        done, _ = await asyncio.wait({self._next}, timeout=timeout)
        if not done:
            raise TimeoutError
        return self._next.result()

    async def receive(self) -> dict | None:
        """The next well-formed message, or None at end of input."""
        if self._next is not None:
            task, self._next = self._next, None
            return await task
        return await self._receive()

    async def _receive(self) -> dict | None:
        while True:
            line = await self._read_frame()
            if line is None:
                return None
            if isinstance(line, Oversized):
                log.warning("skipped a %d-byte frame (limit %d)", line.size, MAX_FRAME_BYTES)
                if line.answers_us:
                    return line.as_response()
                await self._reply(error_response(line.request_id, -32600, line.refusal))
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
                await self._reply(error_response(None, -32700, "Parse error", str(exc)[:200]))
                continue
            if not isinstance(message, dict):
                await self._reply(error_response(None, -32600, "Invalid Request: not an object"))
                continue
            if problem := envelope_problem(message):
                request_id = message.get("id")
                if isinstance(request_id, bool) or not isinstance(request_id, str | int):
                    request_id = None
                await self._reply(error_response(request_id, -32600, f"Invalid Request: {problem}"))
                continue
            return message

    async def _reply(self, message: dict) -> None:
        try:
            await self.send(message)
        except ConnectionError:
            pass

    async def _read_frame(self) -> bytes | Oversized | None:
        """One line; an oversized line is skipped whole, only its head kept."""
        chunks: list[bytes] = []
        head = b""
        size = 0
        while True:
            ended = True
            try:
                chunk = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                chunk = exc.partial
                if not chunk and not size:
                    return None
            except asyncio.LimitOverrunError as exc:
                chunk, ended = await self._reader.readexactly(exc.consumed), False
            except ConnectionResetError:  # a socket for stdio, left with our answers unread
                return None
            head = head or chunk[:HEAD_BYTES]
            size += len(chunk)
            if size <= MAX_FRAME_BYTES:
                chunks.append(chunk)
            else:
                chunks.clear()
            if ended:
                return b"".join(chunks) if size <= MAX_FRAME_BYTES else Oversized.of(head, size)

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._flush()
            self._closed = True
            self._writer.close()
