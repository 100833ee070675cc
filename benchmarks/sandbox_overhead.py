"""What the command sandbox costs per command, on the path `execute` takes.

    python benchmarks/sandbox_overhead.py [--runs 50]

Runs `true` and a small `python -c` through `LocalShell` (the watchdog, the process group
and the output capture included) without a sandbox and under each sandbox policy, and
prints the median wall time of `--runs` runs and the median overhead over `off`, in a
git repository; `workspace-write unasked` is accept-edits' command that runs without
asking, with git's hooks and config and the editor settings guarded. The
target is at most 30 ms per command. Where bubblewrap cannot work it says so and measures
only `off`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deepacp.backends.protocol import ShellCommand
from deepacp.backends.sandbox import POLICIES, SandboxSetting, sandbox_problem
from deepacp.backends.shell import LocalShell

TARGET_MS = 30.0
COMMANDS = {
    "true": "true",
    "python -c": f'{sys.executable} -S -c "import sys; print(sys.version_info[0])"',
}


async def median_ms(shell: LocalShell, command: str, runs: int) -> float:
    await shell.execute(ShellCommand(command))  # warm the page cache
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = await shell.execute(ShellCommand(command))
        times.append((time.perf_counter() - started) * 1000)
        if result.exit_code != 0:
            raise SystemExit(f"{command!r} failed under {result.sandbox}: {result.output}")
    return statistics.median(times)


async def measure(runs: int) -> int:
    problem = sandbox_problem()
    settings = [SandboxSetting("off")]
    if not problem:
        settings += [SandboxSetting(p) for p in POLICIES if p != "off"]
        settings.append(SandboxSetting("workspace-write", unasked=True))
    if problem:
        print(f"no sandbox here ({problem}); measuring commands without one")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        await asyncio.to_thread(subprocess.run, ["git", "init", "-q", folder], check=True)
        rows = []
        for name, command in COMMANDS.items():
            base = None
            for setting in settings:
                shell = LocalShell(root, sandbox=setting)
                median = await median_ms(shell, command, runs)
                base = median if base is None else base
                label = f"{setting.policy}{' unasked' if setting.unasked else ''}"
                rows.append((name, label, median, median - base))
    print(f"median of {runs} runs per command (ms)")
    print(f"{'command':<11} {'policy':<24} {'median':>8} {'overhead':>9}")
    for name, policy, median, overhead in rows:
        print(f"{name:<11} {policy:<24} {median:>8.1f} {overhead:>+9.1f}")
    worst = max(overhead for *_, overhead in rows)
    verdict = "within" if worst <= TARGET_MS else "OVER"
    print(f"largest overhead {worst:.1f} ms: {verdict} the {TARGET_MS:.0f} ms target")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    return asyncio.run(measure(parser.parse_args().runs))


if __name__ == "__main__":
    sys.exit(main())
