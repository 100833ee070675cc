"""`deepacp COMMAND …` run in this process the way a script runs the installed command: its
arguments, working folder, environment and stdin given, its exit code, stdout and stderr
taken — for the tests of what a command says and does, which need no process of their own.
Start-up, signals, stdio framing and terminals stay in tests/e2e/, on the real binary.

What a run leaves in the process is put back after it: the environment, the working folder,
the standard streams and the root logger's handlers (`deepacp` configures logging per run).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path


class _Pipe(io.TextIOWrapper):
    """A stream as a pipe is to a process: text over bytes, never a terminal."""

    def __init__(self, text: str = "") -> None:
        super().__init__(io.BytesIO(text.encode()), encoding="utf-8", write_through=True)

    def isatty(self) -> bool:
        return False

    def value(self) -> str:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("utf-8", "replace")


@contextlib.contextmanager
def restored_logging() -> Iterator[None]:
    """The root logger as it was before: the handlers added meanwhile closed, its level."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)


@contextlib.contextmanager
def _process_state(cwd: Path | None, env: Mapping[str, str]) -> Iterator[None]:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    streams = sys.stdin, sys.stdout, sys.stderr
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    try:
        with restored_logging():
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def deepacp(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`deepacp *args` with exactly the environment `env` (None: this process's), stdin
    `input` (None: empty, as from /dev/null), in `cwd`; its result as `subprocess.run`
    with `capture_output=True, text=True` gives it."""
    from deepacp.cli import main

    stdin, stdout, stderr = _Pipe(input or ""), _Pipe(), _Pipe()
    with _process_state(cwd, dict(os.environ) if env is None else env):
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        try:
            code = main(list(args))
        except SystemExit as exit:  # argparse's usage errors and --help
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 2)
            if isinstance(exit.code, str):
                print(exit.code, file=sys.stderr)
    return subprocess.CompletedProcess(["deepacp", *args], code, stdout.value(), stderr.value())


def write_script(tmp_path: Path, turns: list, name: str = "script.json") -> str:
    """A scripted model answering `turns` in order: its spec for `--model`."""
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns}))
    return f"scripted:{path}"
