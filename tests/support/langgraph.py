"""A real `langgraph dev` serving deepacp's harness (`langgraph.json` at the repository root),
started in a temp directory on 127.0.0.1 with the scripted model configured server-side.

Offline, it must not reach out: `LANGGRAPH_CLI_NO_ANALYTICS=1` (the CLI's usage report),
`LANGGRAPH_NO_VERSION_CHECK=true` (the server's PyPI version check) and
`LANGSMITH_TRACING=false` (no traces to LangSmith). `--allow-blocking`: the harness does
plain file I/O in its tools, which the dev server would otherwise refuse.
`--n-jobs-per-worker`: more than one run at a time (see `JOBS`). The server is private as
the README's set-up is: it serves only the holder of its token (`server.env` for deepacp,
`server.headers` for langgraph-sdk).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepacp.session.hosts.threads import TOKEN_VARIABLE
from tests.support.acp import write_script

REPO = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
}
START_TIMEOUT = 90.0
JOBS = 4
"""Runs at once: `langgraph dev` runs one at a time unless told, and a background task's
run would hold the session's next turn until it ends."""


@dataclass
class LangGraphServer:
    url: str
    workspace: Path
    """The folder the server's runs work in (on the server's side)."""
    script: Path
    log: Path
    process: subprocess.Popen
    token: str

    @property
    def env(self) -> dict[str, str]:
        """What deepacp's environment needs to be let in."""
        return {TOKEN_VARIABLE: self.token}

    @property
    def headers(self) -> dict[str, str]:
        """What a langgraph-sdk client sends to be let in."""
        return {"Authorization": f"Bearer {self.token}"}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ok", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def start_langgraph(tmp_path: Path, turns: list[dict], **extra: Any) -> Iterator[LangGraphServer]:
    """`langgraph dev` with the scripted model `turns`; skips the test where it cannot start."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (pip install -e '.[server]')")
    root = tmp_path / "langgraph"
    (root / "workspace").mkdir(parents=True)
    script = write_script(root / "script.json", turns, **extra)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    token = secrets.token_hex(16)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH", "LANGCHAIN"))},
        **OFFLINE_ENV,
        "DEEPACP_HOME": str(root / "home"),
        "DEEPACP_MODEL": f"scripted:{script}",
        TOKEN_VARIABLE: token,
    }
    log = root / "server.log"
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--allow-blocking"]
    command += ["--n-jobs-per-worker", str(JOBS)]
    command += [
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(REPO / "langgraph.json"),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    server = LangGraphServer(url, root / "workspace", script, log, process, token)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _ready(url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-600:]
                pytest.skip(f"langgraph dev did not start: {tail.strip() or 'no output'}")
            time.sleep(0.1)  # polling the server's /ok until it answers
        yield server
    finally:
        server.stop()


@pytest.fixture
def langgraph_server(tmp_path: Path):
    """`with langgraph_server(turns) as server:` a real `langgraph dev` for the test."""

    def factory(turns: list[dict], **extra: Any):
        return start_langgraph(tmp_path, turns, **extra)

    return factory
