"""What restore points cost each command: the scans before and after it.

    python benchmarks/restore_points.py [--files 10000] [--commands 20]

A workspace of `--files` committed files (plus 20 untracked and 20 modified ones), as a
git checkout and as the same folder outside git. A turn runs `--commands` commands, each
of which changes one file (alternately: edits a tracked file, creates one, deletes one);
the command itself is not timed, only the scans around it (`RestorePoints.before_command`
and `after_command`, what `ScanningShell` adds to every `execute`). Prints the first
command's overhead (the session's first scan reads what it must keep) and the median and
worst of the others, in wall time and CPU time (this process and the git it runs), with
the machine's load, beside what git itself takes for the two looks a command needs
(`git status` twice: stat every tracked file, list the untracked ones). The target in a
git checkout: 50 ms of CPU a command (on a loaded machine the wall time is mostly waiting
for a core). Where the kernel says nothing changed since the last command's scan, that
scan stands for the next one's before it (`deepacp/session/restore/watch.py`).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from deepacp.session.restore import BlobStore, RestorePoints

TARGET_MS = 50.0
QUIET = {"GIT_OPTIONAL_LOCKS": "0"}


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


def tree(root: Path, files: int) -> None:
    """`files` files written an hour ago (as a checkout that has been there a while: git
    finds none of them too new to trust its stat cache)."""
    hour_ago = time.time() - 3600
    for n in range(files):
        path = root / f"pkg{n % 50}" / f"sub{n % 7}" / f"module{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {n}\n" + f"value_{n} = {n}\n" * 100)
        os.utime(path, (hour_ago, hour_ago))


def dirty(root: Path) -> None:
    for n in range(20):
        (root / f"untracked{n}.txt").write_text(f"new file {n}\n" * 50)
        (root / "pkg0" / "sub0" / f"module{n * 350}.py").write_text(f"# edited {n}\n")


def command(root: Path, n: int) -> Callable[[], None]:
    """The n-th command's change to the workspace."""
    target = root / f"pkg{n % 50}" / f"sub{n % 7}" / f"module{n}.py"
    if n % 3 == 0:
        return lambda: target.write_text(f"# rewritten by command {n}\n")
    if n % 3 == 1:
        return lambda: (root / f"made{n}.txt").write_text(f"made by command {n}\n")
    return lambda: target.unlink()


def cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def overheads(root: Path, home: Path, commands: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of the scans around each command, the first one first."""
    points = RestorePoints(home, "bench", root, BlobStore(home / "blobs", budget=2**40))
    points.begin("bench", "thread", None)
    costs = []
    for n in range(commands + 1):
        change = command(root, n)
        wall, used = time.perf_counter(), cpu()
        before = points.before_command()
        wall, used = time.perf_counter() - wall, cpu() - used
        change()
        wall2, used2 = time.perf_counter(), cpu()
        points.after_command(before)
        costs.append((wall + time.perf_counter() - wall2, used + cpu() - used2))
    return costs


def git_floor(root: Path, runs: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of two `git status` runs: git's own part of a command's
    scans."""
    argv = ["git", "-C", str(root), "status", "--porcelain", "-uall", "--ignore-submodules=all"]
    costs = []
    for _ in range(runs):
        wall, used = time.perf_counter(), cpu()
        for _ in range(2):
            subprocess.run(argv, check=True, capture_output=True, env={**os.environ, **QUIET})
        costs.append((time.perf_counter() - wall, cpu() - used))
    return statistics.median(w for w, _ in costs), statistics.median(c for _, c in costs)


def report(label: str, costs: list[tuple[float, float]], target: float | None) -> None:
    (first_wall, first_cpu), rest = costs[0], costs[1:]
    walls, cpus = [w * 1000 for w, _ in rest], [c * 1000 for _, c in rest]
    print(f"{label}:")
    print(f"  first command: {first_wall * 1000:.0f} ms wall, {first_cpu * 1000:.0f} ms CPU")
    line = f"  then per command: median {statistics.median(walls):.1f} ms wall "
    line += f"({statistics.median(cpus):.1f} ms CPU), worst {max(walls):.1f} ms wall"
    if target is not None:
        verdict = "within" if statistics.median(cpus) <= target else "OVER"
        line += f" — {verdict} the {target:.0f} ms CPU target"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--commands", type=int, default=20)
    options = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = tmp / "repo"
        tree(root, options.files)
        git(root, "init", "-q")
        git(root, "add", ".")
        git(root, "commit", "-qm", "checkout")
        dirty(root)
        plain = tmp / "plain"
        shutil.copytree(root, plain, ignore=shutil.ignore_patterns(".git"))
        git_costs = overheads(root, tmp / "home-git", options.commands)
        floor = git_floor(root, options.commands)
        plain_costs = overheads(plain, tmp / "home-plain", options.commands)
    load = f"load {load:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    print(f"restore points: the scans around each command ({load})")
    report(f"git checkout of {options.files:,} files", git_costs, TARGET_MS)
    print(f"  git itself, two `git status` a command: {floor[0] * 1000:.1f} ms wall", end="")
    print(f" ({floor[1] * 1000:.1f} ms CPU)")
    report(f"folder of {options.files:,} files outside git", plain_costs, None)


if __name__ == "__main__":
    main()
