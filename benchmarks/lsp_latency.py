"""Latency of `deepacp lsp`: start-up, and how fast a running edit stops when cancelled.

    python benchmarks/lsp_latency.py [--runs 10]

Prints medians: spawn -> `initialize` response, and `deepacp.cancel` -> the running
`deepacp.edit` answering (target: under 200 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

DEEPACP = str(Path(sys.executable).parent / "deepacp")


class Peer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        stream = self.process.stdout
        while True:
            header = await stream.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(await stream.readexactly(length))
            if "id" in message and "method" in message:  # a request from the server
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message and message["id"] in self.pending:
                self.pending.pop(message["id"]).set_result(message)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def close(self) -> None:
        self.reader.cancel()
        self.process.kill()
        await self.process.wait()


async def once(root: Path, env: dict) -> tuple[float, float]:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        DEEPACP,
        "lsp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=root,
    )
    peer = Peer(process)
    try:
        await peer.request("initialize", {"capabilities": {}, "rootUri": root.as_uri()})
        initialized = time.perf_counter() - started
        peer.notify("initialized", {})
        uri = (root / "a.py").as_uri()
        peer.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        )
        # `initialize` may be answered before the server is loaded (deepacp.lsp.boot): a
        # hover's answer says it is up, so the edit below streams by the time of the cancel.
        await peer.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        )
        args = [{"uri": uri, "instruction": "think for a long time"}]
        edit = asyncio.create_task(
            peer.request("workspace/executeCommand", {"command": "deepacp.edit", "arguments": args})
        )
        await asyncio.sleep(1.5)  # the scripted model is streaming by now
        cancelled = time.perf_counter()
        await peer.request(
            "workspace/executeCommand", {"command": "deepacp.cancel", "arguments": []}
        )
        result = await edit
        assert result["result"]["cancelled"] is True, result
        return initialized, time.perf_counter() - cancelled
    finally:
        await peer.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.py").write_text("x = 1\n")
        script = root / "slow.json"
        script.write_text(json.dumps({"turns": [{"content": "word " * 2000, "delay_ms": 10}]}))
        env = {
            **os.environ,
            "DEEPACP_HOME": str(root / "home"),
            "DEEPACP_MODEL": f"scripted:{script}",
        }
        results = [await once(root, env) for _ in range(args.runs)]
    print(f"deepacp lsp (median of {args.runs} runs)")
    print(
        f"  spawn -> initialize        {statistics.median(r[0] for r in results) * 1000:>6.0f} ms"
    )
    print(
        f"  cancel -> edit answered    {statistics.median(r[1] for r in results) * 1000:>6.0f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
