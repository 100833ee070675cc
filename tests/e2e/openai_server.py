"""A local stand-in for OpenAI's chat completions endpoint (on 127.0.0.1), enough for
langchain-openai to hold a conversation: it answers every request with one fixed reply,
streamed or whole, and records the API key each request carried."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FakeOpenAI:
    reply: str
    base_url: str = ""
    keys: list[str] = field(default_factory=list)
    """The bearer token of every request, in order."""


def _chunk(delta: dict, finish: str | None) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-5.1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


@contextlib.contextmanager
def fake_openai(reply: str) -> Iterator[FakeOpenAI]:
    state = FakeOpenAI(reply)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length) or b"{}")
            state.keys.append(self.headers.get("Authorization", "").removeprefix("Bearer "))
            if not self.path.endswith("/chat/completions"):
                self.send_error(404)
                return
            if request.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(_chunk({"role": "assistant", "content": state.reply}, None))
                self.wfile.write(_chunk({}, "stop"))
                self.wfile.write(b"data: [DONE]\n\n")
                return
            body = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-5.1",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": state.reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
