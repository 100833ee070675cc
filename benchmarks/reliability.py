"""The reliability suite at its full sizes, with attempts and failures per area.

    python benchmarks/reliability.py [pytest args...]

Runs `pytest tests/reliability` with `DEEPACP_RELIABILITY=full` (>= 200 hostile paths per
backend and face, 300 hypothesis examples of approval bypass, 10,000 malformed ACP frames
and 1,000 LSP bodies, 50 kills, 200 cancels, ...) and prints, per area, the attempts, the
failures (target: 0 everywhere), the figures the tests measured and the first examples of
what failed. Exits non-zero when pytest fails. THREAT_MODEL.md says which promise each
area checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.jsonl"
        env = {
            **os.environ,
            "DEEPACP_RELIABILITY": "full",
            "DEEPACP_RELIABILITY_REPORT": str(report),
        }
        started = time.monotonic()
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "tests/reliability"]
        code = subprocess.call([*command, *argv], cwd=ROOT, env=env)
        elapsed = time.monotonic() - started
        rows = (
            [json.loads(line) for line in report.read_text().splitlines()]
            if report.exists()
            else []
        )
    areas: dict[str, dict] = defaultdict(
        lambda: {"runs": 0, "attempts": 0, "failures": 0, "examples": [], "figures": {}}
    )
    for row in rows:
        area = areas[row.pop("area")]
        row.pop("test")
        area["runs"] += 1  # tests, parameters or hypothesis examples that reported
        area["attempts"] += row.pop("attempts")
        area["failures"] += row.pop("failures")
        area["examples"] += row.pop("examples")
        area["figures"].update(row)
    print(f"\nreliability suite, full sizes, {elapsed:.0f} s")
    print(f"{'area':38} {'runs':>5} {'attempts':>9} {'failures':>9}  figures")
    for name, area in sorted(areas.items()):
        figures = ", ".join(f"{k} {v}" for k, v in area["figures"].items())
        counts = f"{area['runs']:>5} {area['attempts']:>9} {area['failures']:>9}"
        print(f"{name:38} {counts}  {figures}")
        for example in area["examples"][:3]:
            print(f"    {example}")
    if not areas:
        print("no tallies were reported")
        return code or 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
