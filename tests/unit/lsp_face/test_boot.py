"""The pieces of `deepacp lsp`'s early `initialize` answer (the whole start-up runs in
tests/e2e/test_lsp_start.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from deepacp.lsp.boot import FirstAnswer, Replay, cache_file, read_message
from tests.support.lsp import lsp_frame


def frame(message: dict) -> bytes:
    return lsp_frame(json.dumps(message).encode())


def test_the_first_message_is_read_and_replayed_byte_for_byte() -> None:
    one = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    two = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    stream = io.BytesIO(b"Content-Type: application/vscode-jsonrpc\r\n" + one + two)
    raw, message = read_message(stream)
    assert message["method"] == "initialize"
    replay = Replay(raw, stream)
    again = b""
    while line := replay.readline():
        again += line
        if line == b"\r\n":
            break
    length = int(again.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    assert json.loads(replay.read(length))["method"] == "initialize"
    assert replay.readline().startswith(b"Content-Length")  # then the stream goes on


def test_a_frame_without_a_length_or_json_is_passed_on_as_it_came() -> None:
    nested = b"[" * 100_000  # past the JSON decoder's stack: a RecursionError
    for data in (b"Garbage: 1\r\n\r\nrest", lsp_frame(b"{not json"), lsp_frame(nested)):
        raw, message = read_message(io.BytesIO(data))
        assert message == {} and data.startswith(raw)


def test_the_cache_key_is_the_clients_capabilities(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEEPACP_HOME", str(tmp_path))
    vscode = cache_file({"capabilities": {"workspace": {"applyEdit": True}}})
    assert vscode == cache_file({"capabilities": {"workspace": {"applyEdit": True}}})
    assert vscode != cache_file({"capabilities": {}})
    assert vscode.parent == tmp_path / "cache" / "lsp-initialize"


def test_the_servers_answer_is_cached_and_sent_once(tmp_path: Path) -> None:
    out = io.BytesIO()
    cache = tmp_path / "cache" / "answer.json"
    stream = FirstAnswer(out, 7, cache, answered=True)
    note = frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}})
    stream.write(note)
    stream.write(frame({"jsonrpc": "2.0", "id": 7, "result": {"capabilities": {}}}))
    later = frame({"jsonrpc": "2.0", "id": 7, "result": None})  # a client reusing the id
    stream.write(later)
    assert out.getvalue() == note + later
    assert json.loads(cache.read_text()) == {"capabilities": {}}
