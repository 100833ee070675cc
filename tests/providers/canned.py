"""Two servers that fail the way real model servers do, for the error tests: one that
answers every request with the same HTTP error (a context overflow in llama.cpp's, vLLM's,
LM Studio's or Ollama's words), and one that takes the request and never answers (a local
server still reading a long prompt). Each counts the model requests it received (not
deepacp's questions about the server: `deepacp.server_facts`)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_PATHS = ("/chat/completions", "/responses", "/messages", "/api/chat")


class CannedServer:
    """Answers every POST with `status` and the JSON `body`."""

    def __init__(self, status: int, body: Any) -> None:
        self.status, self.body, self.requests = status, body, 0
        canned = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                canned.requests += self.path.endswith(MODEL_PATHS)
                data = json.dumps(canned.body).encode()
                self.send_response(canned.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> CannedServer:
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class SilentServer:
    """Accepts connections and reads requests, and never answers one."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        host, port = self._listener.getsockname()[:2]
        self.base_url = f"http://{host}:{port}"
        self._held: list[socket.socket] = []
        self._closed = threading.Event()
        self.requests = 0
        """Requests to a model path (a chat completion, a message)."""
        self.connections = 0
        """Connections accepted, for any request."""

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(conn)
            self.connections += 1
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        try:
            line = conn.recv(65536).split(b"\r\n", 1)[0].split(b" ")  # the request line
            if len(line) > 1 and line[1].decode(errors="replace").endswith(MODEL_PATHS):
                self.requests += 1
        except OSError:
            pass

    def __enter__(self) -> SilentServer:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        self._listener.close()
        for conn in self._held:
            conn.close()


def closed_port() -> str:
    """A base URL on this machine where nothing listens (connections are refused)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class PathServer:
    """Answers the GETs and POSTs of the paths in `answers` with their JSON, or with bytes
    as they are (404 for any other), and records each path asked for: what a server says
    about itself."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers, self.asked = answers, list[str]()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.asked.append(self.path)
                found = self.path in server.answers
                answer = server.answers.get(self.path, {"error": "not found"})
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(200 if found else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.do_GET()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    base_url = CannedServer.base_url
    __exit__ = CannedServer.__exit__

    def __enter__(self) -> PathServer:
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self


LLAMA_CPP = {
    "error": {
        "code": 400,
        "message": "request (3654 tokens) exceeds the available context size (2048 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 3654,
        "n_ctx": 2048,
    }
}
"""llama.cpp's answer to a prompt larger than its context (HTTP 400)."""
