"""glob and grep over a workspace: ripgrep when it is installed, pure Python otherwise.

Both paths give the same results, in the same order: files ignored by a `.gitignore` (at
any level, with git's semantics) are skipped, `.git` is skipped, symlinks are not followed,
hidden files are searched, binary files (a NUL byte) never match, and results come in path
order (segment by segment, as a sorted walk visits them), then line order, so a search cut
at its limit keeps the same first matches on both paths.

Searches are bounded whatever the model asks: ripgrep's output is streamed and filtered as
it comes, never held whole; the Python path reads files in pieces; a regular expression
ripgrep cannot run is refused (never handed to Python's backtracking `re`); and where
Python's `re` must match (no ripgrep, or text held in memory), it runs in a process of its
own with a deadline (`regex_worker`), so no pattern can freeze the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from deepacp.backends.errors import BackendError
from deepacp.backends.globs import compile_glob, filter_matches, glob_matches
from deepacp.backends.pysearch import (
    GrepMatch,
    GrepQuery,
    grep_texts_now,
    is_excluded,
    path_order,
    py_files,
    py_grep,
    walk_files,
)
from deepacp.backends.ripgrep import RipgrepFailed, rg_files, rg_grep, ripgrep

__all__ = [
    "GrepMatch",
    "GrepQuery",
    "compile_glob",
    "filter_matches",
    "glob_matches",
    "is_excluded",
    "path_order",
    "ripgrep",
    "walk_files",
]

log = logging.getLogger(__name__)

REGEX_DEADLINE = 30.0
"""Seconds a Python regex search may take before it is stopped."""


async def grep_texts(items: Iterable[tuple[str, str]], query: GrepQuery) -> list[GrepMatch]:
    """grep over texts held in memory (the state, store and overlay backends), which the
    caller has already chosen by `query.path` and `query.glob`."""
    items = list(items)
    if query.regex:
        return await _in_worker({"texts": items}, query)
    return grep_texts_now(items, query)


async def _in_worker(request: dict, query: GrepQuery) -> list[GrepMatch]:
    """Run a Python-regex search in `regex_worker`, stopped after `REGEX_DEADLINE`."""
    body = json.dumps({**request, "query": dataclasses.asdict(query)}).encode()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",  # never import from the workspace (the worker's cwd is not on sys.path)
        "-m",
        "deepacp.backends.regex_worker",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(body), REGEX_DEADLINE)
    except TimeoutError:
        raise BackendError(
            f"the regular expression took too long (over {REGEX_DEADLINE:.0f} s) and was "
            "stopped; it probably backtracks (nested or overlapping repetition such as "
            "(a|aa)* or (a+)+): use a simpler pattern"
        ) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        reason = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["it failed"]
        raise BackendError(f"invalid regular expression: {reason[0]}")
    return [GrepMatch(p, n, t) for p, n, t in json.loads(out)]


class FirstInOrder:
    """The first `limit` paths in path order of those added in any order, holding at most
    twice `limit` at a time however many come."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[str] = []

    def extend(self, paths: Iterable[str]) -> None:
        self.kept.extend(paths)
        if len(self.kept) > 2 * self.limit:
            self._trim()

    def _trim(self) -> None:
        self.kept.sort(key=path_order)
        del self.kept[self.limit :]

    def result(self) -> list[str]:
        self._trim()
        return self.kept


async def glob_files(
    root: Path,
    start: str,
    matches: Callable[[str], object],
    *,
    limit: int,
    name_glob: str | None = None,
    name_decides: bool = False,
    use_rg: bool | None = None,
    exclude: tuple[str, ...] = (),
) -> list[str]:
    """The first `limit` non-ignored files under `start`, in path order, for which
    `matches(path)` is truthy, without holding the whole tree's listing. `name_glob` (a
    pattern for the file name, no `/`) lets ripgrep skip most files; `matches` still
    decides, unless `name_decides` (the caller knows `name_glob` gives the same answer)."""
    if use_rg is None:
        use_rg = ripgrep([root]) is not None
    if use_rg:
        first = FirstInOrder(limit)
        try:
            async for paths in rg_files(root, start, name_glob, exclude):
                first.extend(paths if name_decides else filter(matches, paths))
            return first.result()
        except RipgrepFailed as exc:
            log.warning("glob in %s: %s; searching without rg", root, exc)

    def walk() -> list[str]:  # the walk is in path order: it stops at the limit
        found = (p for p in py_files(root, start, exclude) if matches(p))
        return list(itertools.islice(found, limit))

    return await asyncio.to_thread(walk)


async def grep_files(
    root: Path, query: GrepQuery, *, use_rg: bool | None = None, exclude: tuple[str, ...] = ()
) -> list[GrepMatch]:
    """grep over the files of a tree (`query.path` a workspace path under `root`)."""
    if use_rg is None:
        use_rg = ripgrep([root]) is not None
    if use_rg:
        try:
            return await rg_grep(root, query, exclude)
        except RipgrepFailed as exc:
            log.warning("grep in %s: %s; searching without rg", root, exc)
    if query.regex:
        return await _in_worker({"root": str(root), "exclude": list(exclude)}, query)
    return await asyncio.to_thread(py_grep, root, query, exclude)
