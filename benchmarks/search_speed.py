"""grep and glob on a generated tree of 20,000 files: deepacp next to plain `rg`.

    python benchmarks/search_speed.py [--files 20000] [--runs 5]

Prints the median wall time of each, and our time as a ratio of rg's (targets: grep and
glob within 1.3x of plain rg; they are timed in turns, so a loaded machine slows all
alike). glob is also timed against rg listing the same files under the same rules as ours
(hidden files listed, .gitignore read outside a git repository, `.git` skipped, the name
as a file type): rg's share of our time, the floor the Python side adds to. The
pure-Python fallback is timed too, for reference.

The tree also holds a folder of `--files // 10` entries. `ls` of it, `glob` of every
Python file and `grep` of a line in every file, as the model's tools run them, are timed
and their peak Python memory measured (tracemalloc): each must answer within 2 s with
"results truncated at N" at the end, in memory that does not grow with the tree.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from deepacp.backends import FilesystemBackend, GrepQuery
from deepacp.backends.ripgrep import _RG_COMMON, _name_filter
from deepacp.backends.search import ripgrep
from deepacp.harness.tools import filesystem_tools

FLAT = "flat"


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
    (root / FLAT).mkdir()
    for i in range(count // 10):
        (root / FLAT / f"entry{i}.txt").touch()


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_time(fn, runs: int) -> float:
    return statistics.median(timed(fn) for _ in range(runs))


def medians_in_turns(*fns, runs: int) -> tuple[float, ...]:
    """Median times of functions run in turns, so all see the same machine load."""
    rounds = [[timed(fn) for fn in fns] for _ in range(runs)]
    return tuple(statistics.median(r[i] for r in rounds) for i in range(len(fns)))


def tool_rows(root: Path) -> list[tuple[str, float, float, str]]:
    """(call, seconds, peak MiB of Python memory, last line) of the model's ls, glob and
    grep tools on the whole tree, each cut at its limit."""
    tools = {t.name: t for t in filesystem_tools(FilesystemBackend(root, use_ripgrep=True))}
    calls = [
        ("ls", {"path": FLAT}),
        ("glob", {"pattern": "**/*.py"}),
        ("grep", {"pattern": "compute(1)"}),
    ]
    rows = []
    for name, args in calls:
        start = time.perf_counter()
        text = asyncio.run(tools[name].ainvoke(args))
        seconds = time.perf_counter() - start
        tracemalloc.start()
        asyncio.run(tools[name].ainvoke(args))
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append((f"{name} {next(iter(args.values()))}", seconds, peak, text.splitlines()[-1]))
    return rows


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
            query = GrepQuery("needle in the haystack", limit=args.files)
            found = asyncio.run(backend.grep(query))
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

        def our_rules_rg_files() -> None:
            command = [rg, *_RG_COMMON, "--files", *_name_filter("*.py"), "--", "."]
            subprocess.run(command, cwd=root, capture_output=True, check=True)

        ours_grep()  # warm the page cache before timing anything
        grep_row = medians_in_turns(ours_grep, plain_rg_grep, runs=args.runs)
        glob_row = medians_in_turns(ours_glob, plain_rg_files, our_rules_rg_files, runs=args.runs)
        rows = [("grep", *grep_row), ("glob", *glob_row[:2])]
        tools = tool_rows(root)
        fallback = "not timed above 50,000 files (run a smaller tree)"
        if args.files <= 50_000:
            fallback_grep = median_time(lambda: ours_grep(slow), max(1, args.runs // 2))
            fallback_glob = median_time(lambda: ours_glob(slow), max(1, args.runs // 2))
            fallback = f"grep {fallback_grep * 1000:.0f} ms, glob {fallback_glob * 1000:.0f} ms"

    print(f"tree: {args.files} files; median of {args.runs} runs")
    print(f"{'':6}{'deepacp':>12}{'plain rg':>12}{'ratio':>8}")
    for name, ours, theirs in rows:
        print(f"{name:6}{ours * 1000:>10.1f}ms{theirs * 1000:>10.1f}ms{ours / theirs:>7.2f}x")
    same, plain = glob_row[2], glob_row[1]
    print(
        f"glob floor: rg under our rules {same * 1000:.1f} ms = {same / plain:.2f}x plain rg; "
        f"ours {glob_row[0] / same:.2f}x that"
    )
    print(f"pure-Python fallback: {fallback}")
    print(f"the model's tools on the whole tree ({args.files // 10} entries in {FLAT}/):")
    for call, seconds, peak, last in tools:
        print(f"  {call:<16}{seconds * 1000:>8.0f} ms {peak:>7.1f} MiB peak   {last}")


if __name__ == "__main__":
    main()
