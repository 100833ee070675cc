"""benchmarks/token_cost.py runs its 40-call session and meets its target."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "token_cost.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("token_cost", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow(reason="two whole 40-call sessions, the benchmark itself")
async def test_caching_bills_at_most_thirty_percent_of_the_uncached_input(capsys):
    benchmark = load_benchmark()
    on, off = await benchmark.measure()
    assert len(on) == len(off) == 40
    assert [c.total for c in on] == [c.total for c in off]  # the same session both times
    assert all(c.written == c.read == 0 for c in off)
    assert on[-1].read > 0.9 * on[-1].total  # the last call reads nearly all from cache
    ratio = benchmark.report(on, off)
    assert ratio <= benchmark.TARGET
    assert f"ratio {ratio:.3f}" in capsys.readouterr().out
