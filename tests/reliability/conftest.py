"""The reliability suite: hostile, repeated and randomized input, counted per area.

Each loop has a small default size so CI stays fast; `DEEPACP_RELIABILITY=full` runs the sizes
THREAT_MODEL.md promises. With `DEEPACP_RELIABILITY_REPORT=FILE`, every tally is appended to
FILE as a JSON line; `benchmarks/reliability.py` runs the full suite that way and prints them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import pytest
from pytest_lsp import pytest_runtest_call, pytest_runtest_makereport  # noqa: F401 (its hooks)

from tests.support.fixtures import *  # noqa: F403
from tests.support.reliability import Tally
from tests.support.users import host_tmp, ordinary_user, runner  # noqa: F401  (as a user)


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
