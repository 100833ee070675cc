"""The reliability suite: hostile, repeated and randomized input, counted per area.

Each loop has a small default size so CI stays fast; `DEEPACP_RELIABILITY=full` runs the sizes
THREAT_MODEL.md promises. With `DEEPACP_RELIABILITY_REPORT=FILE`, every tally is appended to
FILE as a JSON line; `benchmarks/reliability.py` runs the full suite that way and prints them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from acp import schema as S

from tests.e2e.conftest import (  # noqa: F401  (fixtures shared with the e2e suite)
    agent_factory,
    capabilities,
    editor_client,
    model_requests,
)

FULL = os.environ.get("DEEPACP_RELIABILITY") == "full"
MCP_SERVER = str(Path(__file__).parents[1] / "e2e" / "mcp_server.py")


def size(default: int, full: int) -> int:
    """How many attempts a loop makes: `default` in CI, `full` for the benchmark."""
    return full if FULL else default


def notes_server(**env: str) -> S.McpServerStdio:
    """The test MCP server (tests/e2e/mcp_server.py) as a client passes it, with `env`."""
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


@pytest.fixture
def tally(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Tally]]:
    made: list[Tally] = []

    def make(area: str) -> Tally:
        made.append(Tally(area))
        return made[-1]

    yield make
    if report := os.environ.get("DEEPACP_RELIABILITY_REPORT"):
        with open(report, "a", encoding="utf-8") as out:
            for t in made:
                row = {
                    "area": t.area,
                    "test": request.node.nodeid,
                    "attempts": t.attempts,
                    "failures": len(t.failures),
                    "examples": t.failures[:5],
                    **t.figures,
                }
                out.write(json.dumps(row) + "\n")
