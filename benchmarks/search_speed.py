"""grep and glob on a generated tree of 20,000 files: deepacp next to plain `rg`.

    python benchmarks/search_speed.py [--files 20000] [--runs 5]

Prints the median wall time of each, and our time as a ratio of rg's (target: grep within
1.5x of plain rg). The pure-Python fallback is timed too, for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from deepacp.backends import FilesystemBackend, GrepQuery
from deepacp.backends.search import ripgrep


def make_tree(root: Path, count: int) -> None:
    per_dir = 100
    for i in range(count):
        folder = root / f"pkg{i // per_dir // 10}" / f"mod{i // per_dir}"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = ".py" if i % 3 else ".md"
        body = "".join(f"value_{i}_{n} = compute({n})\n" for n in range(20))
        if i % 50 == 0:
            body += "# TODO: needle in the haystack\n"
        (folder / f"file{i}{suffix}").write_text(body)
    (root / ".gitignore").write_text("*.log\nbuild/\n")


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rg = ripgrep()
    if rg is None:
        raise SystemExit("rg not found: pip install ripgrep")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, args.files)
        fast = FilesystemBackend(root, use_ripgrep=True)
        slow = FilesystemBackend(root, use_ripgrep=False)

        def ours_grep(backend: FilesystemBackend = fast) -> None:
            found = asyncio.run(backend.grep(GrepQuery("needle in the haystack")))
            assert len(found) == args.files // 50, len(found)

        def ours_glob(backend: FilesystemBackend = fast) -> None:
            found = asyncio.run(backend.glob("**/*.py", limit=10**9))
            assert len(found) == args.files - len(range(0, args.files, 3))

        def plain_rg_grep() -> None:
            subprocess.run(
                [rg, "-F", "needle in the haystack", "."], cwd=root, capture_output=True, check=True
            )

        def plain_rg_files() -> None:
            subprocess.run(
                [rg, "--files", "-g", "*.py", "."], cwd=root, capture_output=True, check=True
            )

        ours_grep()  # warm the page cache before timing anything
        rows = [
            ("grep", median_time(ours_grep, args.runs), median_time(plain_rg_grep, args.runs)),
            ("glob", median_time(ours_glob, args.runs), median_time(plain_rg_files, args.runs)),
        ]
        fallback_grep = median_time(lambda: ours_grep(slow), max(1, args.runs // 2))
        fallback_glob = median_time(lambda: ours_glob(slow), max(1, args.runs // 2))

    print(f"tree: {args.files} files; median of {args.runs} runs")
    print(f"{'':6}{'deepacp':>12}{'plain rg':>12}{'ratio':>8}")
    for name, ours, theirs in rows:
        print(f"{name:6}{ours * 1000:>10.1f}ms{theirs * 1000:>10.1f}ms{ours / theirs:>7.2f}x")
    fallback = f"grep {fallback_grep * 1000:.0f} ms, glob {fallback_glob * 1000:.0f} ms"
    print(f"pure-Python fallback: {fallback}")


if __name__ == "__main__":
    main()
