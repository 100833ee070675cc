"""CPU a fresh `deepacp` process spends on a one-turn run, most of it importing LangChain and
LangGraph: what every editor start and every `deepacp run` pays, and most of what a test
that starts deepacp costs.

    python benchmarks/start_cost.py [--runs 9] [--deepacp PATH ...]

Prints, for each `deepacp` binary given (default: this venv's), the median and range of
user+system CPU seconds of `deepacp run --model scripted:...` answering one turn, in a
fresh home, and of the harness import alone in that binary's Python (`python -c "import
deepacp.session.assembly as a; a.import_harness()"`). Binaries are run in turn, run by
run, so a busy moment of the machine falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

IMPORT = "from deepacp.session import import_harness; import_harness()"


def cpu_of(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """User+system CPU seconds of running `argv` to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--deepacp", nargs="*", default=[str(Path(sys.executable).parent / "deepacp")]
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="deepacp-start-cost-"))
    script = work / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "hello"}]}))
    project = work / "project"
    project.mkdir()
    runs: dict[str, list[float]] = {}
    imports: dict[str, list[float]] = {}
    for n in range(args.runs):
        for binary in args.deepacp:
            env = {**os.environ, "DEEPACP_HOME": str(work / f"home-{n}")}
            python = str(Path(binary).parent / "python")
            run = [binary, "run", "--model", f"scripted:{script}", "hi"]
            runs.setdefault(binary, []).append(cpu_of(run, env, project))
            imports.setdefault(binary, []).append(cpu_of([python, "-c", IMPORT], env, project))
    for binary in args.deepacp:
        for label, values in (("one-turn run", runs[binary]), ("harness import", imports[binary])):
            print(
                f"{binary}: {label}: median {statistics.median(values):.2f} s CPU "
                f"({min(values):.2f}-{max(values):.2f}, {len(values)} runs)"
            )


if __name__ == "__main__":
    main()
