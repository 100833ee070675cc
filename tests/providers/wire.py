"""Plumbing shared by the provider-wire test servers: a scripted HTTP server on 127.0.0.1.

Each server (Anthropic, OpenAI, Ollama) subclasses `WireServer`: it starts on a free port in a
background thread, answers each model request with the next step of its script, and records
every request it receives, valid or not. A step is a `Reply` (what the model says), a
`Failure` (an HTTP error in the provider's shape) or a callable that receives the request
body and returns either, so a scripted turn can react to a tool result.

A request the real API would reject never consumes a step: the server answers it with the
provider's error shape, which is what lets a test prove that a broken request fails.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import urlsplit

EXHAUSTED = "(script exhausted)"


@dataclass
class ToolCall:
    """A tool call the model makes; `partial_json` streams raw (e.g. truncated) argument text."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    partial_json: str | None = None

    @property
    def arguments(self) -> str:
        return self.partial_json if self.partial_json is not None else json.dumps(self.args)


@dataclass
class Reply:
    """One model answer.

    `stop="max_tokens"` ends it as truncated (Anthropic `max_tokens`, OpenAI `length`,
    Ollama `length`); `stream_error` sends that error type mid-stream after the first
    content delta; `delay` is seconds between streamed events; `chunk` is the characters per
    text or argument delta.
    """

    text: str = ""
    thinking: str | None = None
    redacted_thinking: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop: str | None = None
    stream_error: str | None = None
    delay: float = 0.0
    chunk: int = 8


@dataclass
class Failure:
    """An HTTP error answer (429, 500, 529, 400...) in the provider's error shape."""

    status: int
    message: str | None = None
    retry_after: float | None = None


@dataclass
class Drop:
    """The server closes the connection without answering (a dropped connection)."""


Step = Reply | Failure | Drop | Callable[[Any], "Reply | Failure | Drop"]


@dataclass
class Recorded:
    """One request as the server received it, and how it was answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    status: int = 0
    error: str | None = None
    usage: dict[str, Any] | None = None
    disconnected: bool = False


class InvalidRequest(Exception):
    """A request the real API would reject: answered with `status` and the provider's shape."""

    def __init__(
        self, message: str, *, status: int = 400, kind: str = "invalid_request_error", **extra: Any
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind
        self.extra = extra


class ClientGone(Exception):
    """The client closed the connection in the middle of a streamed answer."""


class _Dropped(Exception):
    """A `Drop` step: close the connection now."""


class Exchange:
    """One HTTP request/response: parsed input, and JSON / streamed (chunked) output."""

    def __init__(self, handler: BaseHTTPRequestHandler, record: Recorded) -> None:
        self._handler = handler
        self.record = record
        self._streaming = False

    @property
    def body(self) -> Any:
        return self.record.body

    @property
    def headers(self) -> dict[str, str]:
        return self.record.headers

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.record.status = status
        self._handler.send_response(status)
        self._handler.send_header("content-type", "application/json")
        self._handler.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self._handler.send_header(name, value)
        self._handler.end_headers()
        self._write(data)

    def start_stream(self, content_type: str) -> None:
        self.record.status = 200
        self._streaming = True
        self._handler.send_response(200)
        self._handler.send_header("content-type", content_type)
        self._handler.send_header("transfer-encoding", "chunked")
        self._handler.send_header("cache-control", "no-cache")
        self._handler.end_headers()

    def write_chunk(self, data: bytes) -> None:
        self._write(f"{len(data):X}\r\n".encode() + data + b"\r\n")

    def end_stream(self) -> None:
        if self._streaming:
            self._write(b"0\r\n\r\n")
            self._streaming = False

    def _write(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(data)
            self._handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.record.disconnected = True
            raise ClientGone from exc


class WireServer:
    """A scripted provider server; subclasses map `routes` to their handlers."""

    routes: ClassVar[dict[tuple[str, str], str]] = {}

    def __init__(self, script: Iterable[Step] = ()) -> None:
        self.script: deque[Step] = deque(script)
        self.requests: list[Recorded] = []
        self.keys: set[str] | None = None
        """The API keys the server accepts; None: any."""
        self.listed: list[str] = []
        """The model ids `GET /v1/models` lists."""
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.wire = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *steps: Step) -> None:
        """Append steps to the script."""
        with self._lock:
            self.script.extend(steps)

    def model_requests(self, path: str | None = None) -> list[Recorded]:
        """The recorded requests to `path` (default: the server's model endpoints: what is
        POSTed, not a listing of the models or a question about the server)."""
        paths = {path} if path else {p for (method, p) in self.routes if method == "POST"}
        return [r for r in self.requests if r.path in paths and (path or r.method == "POST")]

    def start(self) -> WireServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_step(self, body: Any) -> Reply | Failure:
        """Consume the next scripted step for a valid request (`EXHAUSTED` text when none);
        a `Drop` closes the connection instead."""
        with self._lock:
            step = self.script.popleft() if self.script else Reply(text=EXHAUSTED)
        step = step(body) if callable(step) else step
        if isinstance(step, Drop):
            raise _Dropped
        return step

    def pause(self, seconds: float) -> None:
        """Wait between streamed events; returns early when the server stops."""
        if seconds > 0:
            self._closing.wait(seconds)

    def error_body(self, error: InvalidRequest) -> Any:
        raise NotImplementedError

    def _dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        path = urlsplit(handler.path).path
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        record = Recorded(method, path, headers, None, time.monotonic())
        with self._lock:
            self.requests.append(record)
        exchange = Exchange(handler, record)
        try:
            name = self.routes.get((method, path))
            if name is None:
                raise InvalidRequest(
                    f"Not found: {method} {path}", status=404, kind="not_found_error"
                )
            try:
                record.body = json.loads(raw) if raw else None
            except json.JSONDecodeError as exc:
                raise InvalidRequest(f"invalid JSON body: {exc.msg}") from None
            getattr(self, name)(exchange)
        except InvalidRequest as error:
            record.error = error.message
            if not exchange._streaming:
                exchange.send_json(error.status, self.error_body(error))
        except ClientGone:
            pass
        except _Dropped:
            record.error = "connection dropped"
            record.disconnected = True
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
        finally:
            try:
                exchange.end_stream()
            except ClientGone:
                pass


def chunks(text: str, size: int) -> Iterator[str]:
    """`text` in pieces of `size` characters (none for empty text)."""
    size = max(1, size)
    yield from (text[i : i + size] for i in range(0, len(text), size)) if text else ()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    wire: WireServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self.server.wire._dispatch(self, "POST")

    def do_GET(self) -> None:
        self.server.wire._dispatch(self, "GET")

    def log_message(self, format: str, *args: Any) -> None:
        pass
