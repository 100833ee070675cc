"""The reliability suite's sizes, tallies and the test MCP server a client would pass."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from acp import schema as S

FULL = os.environ.get("DEEPACP_RELIABILITY") == "full"
MCP_SERVER = str(Path(__file__).with_name("mcp_server.py"))


def size(default: int, full: int) -> int:
    """How many attempts a loop makes: `default` in CI, `full` for the benchmark."""
    return full if FULL else default


def notes_server(**env: str) -> S.McpServerStdio:
    """The test MCP server (tests/support/mcp_server.py) as a client passes it, with `env`."""
    variables = [S.EnvVariable(name=k, value=v) for k, v in env.items()]
    return S.McpServerStdio(name="notes", command=sys.executable, args=[MCP_SERVER], env=variables)


@dataclass
class Tally:
    """Attempts and failures of one area; a test records every attempt, then `check()`s."""

    area: str
    attempts: int = 0
    failures: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)  # e.g. latencies, for the report

    def record(self, ok: bool, what: str) -> None:
        self.attempts += 1
        if not ok:
            self.failures.append(what)

    def check(self) -> None:
        assert self.attempts > 0, f"{self.area}: nothing was attempted"
        assert not self.failures, (
            f"{self.area}: {len(self.failures)}/{self.attempts} failed, e.g. {self.failures[:5]}"
        )
