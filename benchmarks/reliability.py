"""The reliability suite at its full sizes, with attempts and failures per area.

    python benchmarks/reliability.py [pytest args...]

Runs `pytest tests/reliability` with `DEEPACP_RELIABILITY=full` (>= 200 hostile paths per
backend and face, 300 hypothesis examples of approval bypass, 10,000 malformed ACP frames
and 1,000 LSP bodies, 50 kills, 200 cancels, 300 MB search files, 1,000 commands in one
message, 1,200 sessions under a descriptor limit, ...) and prints, per area, the threat of
THREAT_MODEL.md it checks, the attempts, the failures (target: 0 everywhere), the figures
the tests measured and the first examples of what failed. An area that reported nothing is
listed as not run. Exits non-zero when pytest fails or an area did not run.
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

THREATS = {  # area (or the start of its name) -> the THREAT_MODEL.md threat it checks
    "injection framing": "T1",
    "path escape": "T2",
    "permission rules: links": "T2",
    "home: out of reach": "T2",
    "approval bypass": "T3",
    "code-execution files": "T12",
    "secrets": "T4",
    "bounded search": "T6",
    "resources: descriptors": "T6",
    "resources: commands die": "T6",
    "resources: concurrent commands": "T6",
    "resources: MCP start-up": "T5",
    "protocol fuzz": "T7",
    "crash safety": "T8",
    "home: corrupt database": "T8",
    "home: private modes": "TB7",
    "home: doctor": "TB7",
    "concurrency": "T9",
    "resources: one turn at a time": "T9",
    "cancel storm": "T10",
    "model-controlled ids": "T11",
}


def threat_of(area: str) -> str:
    return next((t for prefix, t in THREATS.items() if area.startswith(prefix)), "?")


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
    print(f"{'area':62} {'threat':>6} {'runs':>5} {'attempts':>9} {'failures':>9}  figures")
    for name, area in sorted(areas.items(), key=lambda item: (threat_of(item[0]), item[0])):
        figures = ", ".join(f"{k} {v}" for k, v in area["figures"].items())
        counts = f"{area['runs']:>5} {area['attempts']:>9} {area['failures']:>9}"
        print(f"{name:62} {threat_of(name):>6} {counts}  {figures}")
        for example in area["examples"][:3]:
            print(f"    {example}")
    missing = [p for p in THREATS if not any(name.startswith(p) for name in areas)]
    for prefix in missing:
        print(f"{prefix:62} {THREATS[prefix]:>6}   not run")
    if not areas:
        print("no tallies were reported")
        return code or 1
    return code or (1 if missing else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
