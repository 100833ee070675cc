"""`deepacp lsp` answers `initialize` from its cache before pygls is imported: the answer
is the one the server itself gave that client before, sent once, and the server then
works as if it had answered itself. Spoken byte by byte over the real binary's stdio."""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from pathlib import Path

from tests.support.lsp import lsp_frame

DEEPACP = str(Path(sys.executable).parent / "deepacp")
CAPABILITIES = {"general": {"positionEncodings": ["utf-8", "utf-16"]}, "window": {}}


async def read_frame(stream: asyncio.StreamReader) -> dict:
    header = await stream.readuntil(b"\r\n\r\n")
    length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
    return json.loads(await stream.readexactly(length))


async def session(home: Path, workspace: Path, first: bytes | None = None) -> list[dict]:
    """Start `deepacp lsp`, send `first` (if any), initialize, a code action and shutdown;
    every message the server sent until the shutdown answer."""
    process = await asyncio.create_subprocess_exec(
        DEEPACP,
        "lsp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={"DEEPACP_HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=workspace,
    )
    assert process.stdin is not None and process.stdout is not None
    uri = (workspace / "a.py").as_uri()

    def send(message: dict) -> None:
        assert process.stdin is not None
        process.stdin.write(lsp_frame(json.dumps({"jsonrpc": "2.0", **message}).encode()))

    if first is not None:
        process.stdin.write(first)
    params = {"capabilities": CAPABILITIES, "rootUri": workspace.as_uri(), "processId": None}
    send({"id": 1, "method": "initialize", "params": params})
    send({"method": "initialized", "params": {}})
    document = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    action = {"textDocument": {"uri": uri}, "range": where, "context": {"diagnostics": []}}
    send({"id": 2, "method": "textDocument/codeAction", "params": action})
    send({"id": 3, "method": "shutdown"})
    seen = []
    try:
        async with asyncio.timeout(60):
            while not any(m.get("id") == 3 for m in seen):
                seen.append(await read_frame(process.stdout))
    finally:
        process.kill()
        await process.wait()
    return seen


def answers(seen: list[dict], request_id: int) -> list[dict]:
    return [m for m in seen if m.get("id") == request_id and "method" not in m]


async def test_the_second_start_answers_initialize_from_the_cache(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x = 1\n")
    first = await session(home, workspace)
    cached = list((home / "cache" / "lsp-initialize").glob("*.json"))
    assert len(cached) == 1 and stat.S_IMODE(cached[0].stat().st_mode) == 0o600
    second = await session(home, workspace)
    for seen in (first, second):
        assert len(answers(seen, 1)) == 1  # never answered twice
        assert "result" in answers(seen, 2)[0] and answers(seen, 3)[0]["result"] is None
    result = answers(second, 1)[0]["result"]
    assert result == answers(first, 1)[0]["result"]
    assert result["capabilities"]["positionEncoding"] == "utf-8"
    assert "deepacp.edit" in result["capabilities"]["executeCommandProvider"]["commands"]


async def test_a_broken_cache_or_another_client_is_answered_by_the_server(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x = 1\n")
    await session(home, workspace)
    [entry] = (home / "cache" / "lsp-initialize").glob("*.json")
    entry.write_text("{not json")
    seen = await session(home, workspace)
    [answer] = answers(seen, 1)
    assert answer["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert json.loads(entry.read_text()) == answer["result"]  # mended


async def test_a_first_message_that_is_not_initialize_loses_nothing(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x = 1\n")
    ping = lsp_frame(json.dumps({"jsonrpc": "2.0", "method": "$/setTrace", "params": {}}).encode())
    seen = await session(home, workspace, first=ping)
    assert len(answers(seen, 1)) == 1 and answers(seen, 3)[0]["result"] is None
