"""`deepacp lsp` start-up: answer `initialize` before pygls and the server are imported.

Importing pygls, lsprotocol and the server takes most of a second, and an editor waits for
the `initialize` answer before it opens a document. So a thread imports them while the
main thread reads the first message: when it is `initialize` from a client whose
capabilities this version of the server answered before, the answer is sent from the
cache at once. The server then handles that same message as usual (so its state is set
as always), and its own answer is not sent twice but kept as the cache's next entry.
The cache lives in `$DEEPACP_HOME/cache/lsp-initialize/`, one file per client kind, keyed
by the client's capabilities and the server's code, so a change to either misses it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from deepacp.config import deepacp_home
from deepacp.lsp.framing import Frames, read_headers
from deepacp.private import private_dir, private_file
from deepacp.stdio import stdin_reader

if TYPE_CHECKING:
    from deepacp.backends.sandbox import SandboxPolicy

Message = dict[str, Any]


def serve(sandbox: SandboxPolicy | None, profile: str | None = None) -> int:
    """Run `deepacp lsp` on stdin/stdout (`profile`: the --profile flag, checked)."""
    loading = threading.Thread(target=_import_server, daemon=True)
    loading.start()
    stdin, stdout = stdin_reader(), sys.stdout.buffer
    raw, first = read_message(stdin)
    cache = None
    if first.get("method") == "initialize" and "id" in first:
        cache = cache_file(first.get("params"))
        if (known := read_cached(cache)) is not None:
            write_message(stdout, {"jsonrpc": "2.0", "id": first["id"], "result": known})
            answered = True
        else:
            answered = False
        stdout = FirstAnswer(stdout, first["id"], cache, answered)
    loading.join()
    from deepacp.lsp.server import serve as serve_server

    messages = Frames(Replay(raw, stdin), sys.stdout.buffer)
    return serve_server(sandbox, messages, stdout, profile)  # type: ignore[arg-type]


def _import_server() -> None:
    import deepacp.lsp.server  # noqa: F401


def read_message(stream: IO[bytes]) -> tuple[bytes, Message]:
    """The first message's bytes as read, and the message (empty when it is not one)."""
    raw, length, _ = read_headers(stream)
    if length is None:
        return raw, {}
    body = stream.read(length)
    raw += body
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        return raw, {}
    return raw, message if isinstance(message, dict) else {}


def write_message(stream: IO[bytes], message: Message) -> None:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def cache_file(params: object) -> Path:
    """Where the answer to an `initialize` with these `params` is cached: its key is the
    client's capabilities and the stamps of the server's own modules."""
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    code = sorted(Path(__file__).parent.glob("*.py"))
    pygls = importlib.util.find_spec("pygls")  # found, not imported
    if pygls is not None and pygls.origin is not None:
        code.append(Path(pygls.origin).with_name("capabilities.py"))
    stamps = [(str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in code if p.exists()]
    key = json.dumps([capabilities, stamps], sort_keys=True, default=str)
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return deepacp_home() / "cache" / "lsp-initialize" / f"{name}.json"


def read_cached(path: Path) -> Message | None:
    try:
        result = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) else None


class Replay:
    """`stream`, with `head` (the bytes already read from it) read again first."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self.head = head
        self.stream = stream

    def readline(self) -> bytes:
        if not self.head:
            return self.stream.readline()
        line, newline, rest = self.head.partition(b"\n")
        self.head = rest
        return line + newline

    def read(self, size: int = -1) -> bytes:
        if not self.head:
            return self.stream.read(size)
        taken, self.head = self.head[:size], self.head[size:]
        if len(taken) < size:
            taken += self.stream.read(size - len(taken))
        return taken


class FirstAnswer:
    """`stream` for the server's output: its answer to the first `initialize` is cached,
    and held back when the cache already answered it."""

    def __init__(self, stream: IO[bytes], request_id: object, cache: Path, answered: bool):
        self.stream = stream
        self.request_id = request_id
        self.cache = cache
        self.answered = answered
        self.waiting = True

    def write(self, data: bytes) -> int:
        if self.waiting and (answer := _answer_to(data, self.request_id)) is not None:
            self.waiting = False
            if "result" in answer:
                _store(self.cache, answer["result"])
            if self.answered:
                return len(data)
        return self.stream.write(data)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


def _answer_to(data: bytes, request_id: object) -> Message | None:
    """The message in `data` if it answers `request_id`."""
    _, _, body = data.partition(b"\r\n\r\n")
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
        return message
    return None


def _store(path: Path, result: object) -> None:
    try:
        private_dir(path.parent)
        tmp = private_file(path.with_name(f"{path.name}.tmp"))
        tmp.write_text(json.dumps(result), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # only the next start-up is slower
