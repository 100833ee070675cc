"""ls, glob and grep on a folder larger than the tools show: the first entries in path order,
then a line saying where the list was cut and how to narrow it; small folders unchanged."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from deepacp.backends import FilesystemBackend
from deepacp.backends.search import FirstInOrder, path_order, ripgrep
from deepacp.harness.tools import MAX_RESULTS, filesystem_tools

MORE = 25  # files beyond what a listing shows
MARKER = f"… results truncated at {MAX_RESULTS}; narrow the "
RG = [pytest.param(True, marks=pytest.mark.skipif(ripgrep() is None, reason="no rg")), False]


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    (root / "many").mkdir()
    for i in range(MAX_RESULTS + MORE):
        (root / "many" / f"f{i:05d}.py").write_text(f"needle {i}\n")
    (root / "many" / "skipped.log").write_text("needle in an ignored file\n")
    (root / ".gitignore").write_text("*.log\n")
    return root


async def run(root: Path, use_rg: bool, name: str, **args: str) -> list[str]:
    tools = {t.name: t for t in filesystem_tools(FilesystemBackend(root, use_ripgrep=use_rg))}
    return (await tools[name].ainvoke(args)).splitlines()


FIRST = [f"many/f{i:05d}.py" for i in range(MAX_RESULTS)]


@pytest.mark.parametrize("use_rg", RG)
async def test_a_listing_past_the_limit_ends_with_the_truncation_marker(big, use_rg) -> None:
    listed = await run(big, use_rg, "ls", path="many")
    assert listed[:-1] == FIRST and listed[-1].startswith(MARKER + "path")
    found = await run(big, use_rg, "glob", pattern="**/*.py")
    assert found[:-1] == FIRST and found[-1] == MARKER + "pattern or path"
    matches = await run(big, use_rg, "grep", pattern="needle")
    assert [m.split(":")[0] for m in matches[:-1]] == FIRST
    assert matches[-1] == MARKER + "pattern, path or glob"


@pytest.mark.parametrize("use_rg", RG)
async def test_a_listing_within_the_limit_is_whole_and_unmarked(big, use_rg) -> None:
    few = [f"many/f{i:05d}.py" for i in range(MAX_RESULTS, MAX_RESULTS + MORE)]
    assert await run(big, use_rg, "glob", pattern="many/f01*.py") == few
    grep = await run(big, use_rg, "grep", pattern="needle 10", glob="f01*.py")
    assert grep == [f"{path}:1: needle {i}" for i, path in enumerate(few, start=MAX_RESULTS)]
    assert await run(big, use_rg, "ls") == [".gitignore", "many/"]


@pytest.mark.parametrize("limit", [1, 3, 10])
@pytest.mark.parametrize("seed", range(5))
def test_the_first_in_order_are_those_of_a_full_sort(limit: int, seed: int) -> None:
    paths = [f"d{random.Random(seed * 7 + n).randrange(50)}/{n}" for n in range(200)]
    paths += ["a-b", "a/b", "a.txt"]
    random.Random(seed).shuffle(paths)
    first = FirstInOrder(limit)
    for start in range(0, len(paths), 7):  # in batches, as rg's output comes
        first.extend(paths[start : start + 7])
        assert len(first.kept) <= 2 * limit  # memory bounded by the limit, not the tree
    assert first.result() == sorted(paths, key=path_order)[:limit]
