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
import functools
import json
import os
import re
import shutil
import stat
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from deepacp.backends.errors import BackendError
from deepacp.backends.globs import compile_glob, filter_matches, glob_matches
from deepacp.secrets import clip

__all__ = ["GrepMatch", "compile_glob", "filter_matches", "glob_matches"]

MAX_LINE_CHARS = 300
SKIPPED_DIRS = frozenset({".git"})
READ_CHUNK = 1 << 20
"""The Python path reads files in pieces of this size."""
LONG_LINE = 4 << 20
"""A line longer than this is matched in overlapping windows, never held whole."""
WINDOW_OVERLAP = 4096
RG_MAX_COLUMNS = 65536
"""ripgrep prints at most this much of a matching line (we show far less)."""
PARALLEL_MATCHES_PER_LIMIT = 8
REGEX_DEADLINE = 30.0
"""Seconds a Python regex search may take before it is stopped."""
RG_SYNTAX = (
    "grep's regular expressions are ripgrep's (Rust regex syntax): no look-around "
    "((?=…), (?!…), (?<=…), (?<!…)) and no backreferences (\\1); rewrite the pattern "
    "without them, or search for a simpler pattern and read the matches"
)


@dataclass(frozen=True, slots=True)
class GrepMatch:
    path: str
    line: int
    text: str


def path_order(path: str) -> tuple[str, ...]:
    """The order a sorted walk visits paths in (`a/b` before `a-b` before `a.txt`)."""
    return tuple(path.split("/"))


def match_order(match: GrepMatch) -> tuple[tuple[str, ...], int]:
    return path_order(match.path), match.line


def _load_gitignore(directory: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """Git semantics: the deepest .gitignore with a matching pattern decides."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return result.include
    return False


def is_excluded(path: str, exclude: Iterable[str]) -> bool:
    """True when the workspace path is one of the `exclude` folders or inside one."""
    return any(path == folder or path.startswith(folder + "/") for folder in exclude)


def walk_files(root: Path, start: str = "", exclude: tuple[str, ...] = ()) -> Iterator[str]:
    """Yield workspace paths of the regular files under `start`, honouring .gitignore, in
    path order; folders in `exclude` (workspace paths) are not entered."""
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    # .gitignore files of the directories above `start` apply too.
    parts = start.split("/") if start else []
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        if spec := _load_gitignore(root / base if base else root):
            specs.append((base, spec))
        rel = "/".join(parts[: depth + 1])
        if parts[depth] in SKIPPED_DIRS or _ignored(specs, rel, True):
            return
    if is_excluded(start, exclude):
        return
    yield from _walk(root, start, specs, exclude)


def _walk(
    root: Path,
    rel_dir: str,
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
    exclude: tuple[str, ...],
) -> Iterator[str]:
    directory = root / rel_dir if rel_dir else root
    if spec := _load_gitignore(directory):
        specs = [*specs, (rel_dir, spec)]
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            if entry.name in SKIPPED_DIRS or _ignored(specs, rel, True) or rel in exclude:
                continue
            yield from _walk(root, rel, specs, exclude)
        elif stat.S_ISREG(mode) and not _ignored(specs, rel, False):
            yield rel


def make_matcher(pattern: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(pattern if regex else re.escape(pattern), flags)


def clip_line(line: str) -> str:
    line = line.rstrip("\r\n")
    if len(line) > MAX_LINE_CHARS:
        return clip(line, MAX_LINE_CHARS) + " … [line clipped]"
    return line


def grep_text(path: str, text: str, matcher: re.Pattern[str]) -> Iterator[GrepMatch]:
    for number, line in enumerate(text.splitlines(), start=1):
        if matcher.search(line):
            yield GrepMatch(path, number, clip_line(line))


def grep_texts_now(
    items: Iterable[tuple[str, str]], matcher: re.Pattern[str], limit: int
) -> list[GrepMatch]:
    """grep over (path, text) pairs, in this process (literal patterns, or the worker)."""
    found: list[GrepMatch] = []
    for path, text in sorted(items, key=lambda item: path_order(item[0])):
        if "\0" in text:
            continue
        for match in grep_text(path, text, matcher):
            found.append(match)
            if len(found) >= limit:
                return found
    return found


async def grep_texts(
    items: Iterable[tuple[str, str]],
    pattern: str,
    *,
    regex: bool,
    ignore_case: bool,
    limit: int,
) -> list[GrepMatch]:
    """grep over texts held in memory (the state, store and overlay backends)."""
    items = list(items)
    if regex:
        request = {"texts": items}
        return await _in_worker(request, pattern, ignore_case=ignore_case, limit=limit)
    matcher = make_matcher(pattern, regex=False, ignore_case=ignore_case)
    return grep_texts_now(items, matcher, limit)


def grep_file(path: str, file: Path, matcher: re.Pattern[str], limit: int) -> list[GrepMatch]:
    """A file's matches (at most `limit`), read in pieces; reading stops at a NUL byte
    (a binary file), keeping only what came before it."""
    found: list[GrepMatch] = []
    number = 0
    pending = b""  # the line not finished yet
    head: bytes | None = None  # the start of an overlong line matched in windows
    hit = False  # whether a window of that line matched already
    try:
        handle = open(file, "rb")  # noqa: SIM115 (closed by the with below)
    except OSError:
        return []
    with handle:
        while True:
            chunk = handle.read(READ_CHUNK)
            if b"\0" in chunk:
                return found
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if not chunk and pending:  # the last line has no newline
                lines.append(pending)
            for line in lines:
                number += 1
                if hit or matcher.search(line.decode("utf-8", "replace")):
                    shown = _shown(head if head is not None else line)
                    found.append(GrepMatch(path, number, clip_line(shown)))
                    if len(found) >= limit:
                        return found
                head, hit = None, False
            if not chunk:
                return found
            if len(pending) > LONG_LINE:  # match this window, keep a little for the next
                head = pending[: 4 * MAX_LINE_CHARS + 4] if head is None else head
                hit = hit or bool(matcher.search(pending.decode("utf-8", "replace")))
                pending = pending[-WINDOW_OVERLAP:]


def _shown(line: bytes) -> str:
    return line[: 4 * MAX_LINE_CHARS + 4].decode("utf-8", "replace")


def py_files(root: Path, start: str = "", exclude: tuple[str, ...] = ()) -> list[str]:
    target = root / start if start else root
    if start and target.is_file() and not target.is_symlink():
        return [] if is_excluded(start, exclude) else [start]
    return list(walk_files(root, start, exclude))


def _relative_to(path: str, start: str) -> str:
    return path[len(start) + 1 :] if start and path.startswith(start + "/") else path


def py_grep(
    root: Path,
    pattern: str,
    start: str,
    glob: str | None,
    *,
    regex: bool,
    ignore_case: bool,
    limit: int,
    exclude: tuple[str, ...] = (),
) -> list[GrepMatch]:
    """The pure-Python search of a tree: a sorted walk, files read in pieces, stopping at
    `limit`. Runs in a thread for literal patterns and in the worker for regexes."""
    matcher = make_matcher(pattern, regex=regex, ignore_case=ignore_case)
    found: list[GrepMatch] = []
    target = root / start if start else root
    files = [start] if start and target.is_file() else walk_files(root, start, exclude)
    for path in files:
        if is_excluded(path, exclude):
            continue
        if glob and not filter_matches(glob, _relative_to(path, start)):
            continue
        found.extend(grep_file(path, root / path, matcher, limit - len(found)))
        if len(found) >= limit:
            break
    return found


async def _in_worker(
    request: dict, pattern: str, *, ignore_case: bool, limit: int
) -> list[GrepMatch]:
    """Run a Python-regex search in `regex_worker`, stopped after `REGEX_DEADLINE`."""
    body = json.dumps(
        {**request, "pattern": pattern, "ignore_case": ignore_case, "limit": limit}
    ).encode()
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


@functools.cache
def ripgrep() -> str | None:
    """The `rg` binary: next to this interpreter (the `ripgrep` wheel puts it there), or on PATH."""
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


_RG_COMMON = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-ignore-dot",
    "--glob=!.git",
    "--no-messages",
    "--null",
    "--color=never",
)


@contextlib.asynccontextmanager
async def _rg(root: Path, args: list[str]) -> AsyncIterator[asyncio.subprocess.Process]:
    """Run rg in `root`, streaming its stdout; rg is killed if we stop reading early."""
    proc = await asyncio.create_subprocess_exec(
        ripgrep() or "rg",
        *_RG_COMMON,
        *args,
        cwd=root,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        limit=2 * RG_MAX_COLUMNS + 65536,
    )
    assert proc.stdout is not None
    try:
        yield proc
    finally:
        # Kill only a process we stop reading: Popen.kill() polls, and a poll that reaps an
        # exited rg before asyncio's child watcher does makes its exit code read 255.
        if not proc.stdout.at_eof() and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()


def _rg_target(start: str) -> str:
    return start or "."


def _strip_dot(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _exclude_args(exclude: tuple[str, ...]) -> list[str]:
    return [f"--glob=!/{folder}" for folder in exclude if not set(folder) & set("*?[]{}!\\")]


async def rg_files(
    root: Path, start: str = "", name_glob: str | None = None, exclude: tuple[str, ...] = ()
) -> list[str]:
    args = ["--files"] + ([f"--glob={name_glob}"] if name_glob else []) + _exclude_args(exclude)
    out: list[str] = []
    rest = b""
    async with _rg(root, [*args, "--", _rg_target(start)]) as proc:
        while True:
            chunk = await proc.stdout.read(1 << 16)  # type: ignore[union-attr]
            names = (rest + chunk).split(b"\0")
            rest = names.pop() if chunk else b""
            for raw in names if chunk else [*names, rest]:
                if raw := raw.strip(b"\n"):
                    path = _strip_dot(os.fsdecode(raw))
                    if not is_excluded(path, exclude):
                        out.append(path)
            if not chunk:
                return out


def _rg_path_glob(glob: str, start: str) -> str | None:
    """The path glob as rg should see it (anchored at the root), or None to filter alone."""
    if set(start) & set("*?[]{}!\\"):
        return None
    return f"{start}/{glob}" if start else glob


class _TooManyMatches(Exception):
    """More matches than a parallel search should hold: search again in path order."""


async def rg_grep(
    root: Path,
    pattern: str,
    start: str,
    glob: str | None,
    *,
    regex: bool,
    ignore_case: bool,
    limit: int,
    exclude: tuple[str, ...] = (),
) -> list[GrepMatch]:
    """First a parallel search holding at most `PARALLEL_MATCHES_PER_LIMIT` × `limit`
    matches (then sorted and cut); when there are more, a search in path order (one rg
    thread) that stops at `limit`. Either way the first `limit` matches in path order."""
    args = ["--no-heading", "--line-number", "--with-filename"]
    args += [f"--max-columns={RG_MAX_COLUMNS}", "--max-columns-preview"]
    if not regex:
        args.append("--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    if glob:  # rg skips what the glob excludes; we still check each path ourselves
        rg_glob = glob if "/" not in glob else _rg_path_glob(glob, start)
        if rg_glob is not None:
            args.append(f"--glob={rg_glob}")
    args += _exclude_args(exclude)
    target = ["--regexp", pattern, "--", _rg_target(start)]

    decided: dict[str, bool] = {}

    def accept(path: str) -> bool:
        if path not in decided:
            decided[path] = not is_excluded(path, exclude) and (
                glob is None or filter_matches(glob, _relative_to(path, start))
            )
        return decided[path]

    try:
        hold = PARALLEL_MATCHES_PER_LIMIT * limit
        found = await _rg_matches(root, [*args, f"--max-count={limit}", *target], accept, hold)
    except _TooManyMatches:
        found = await _rg_matches(root, [*args, "--sort=path", *target], accept, limit)
    found.sort(key=match_order)
    return found[:limit]


async def _rg_matches(
    root: Path, args: list[str], accept: Callable[[str], bool], most: int
) -> list[GrepMatch]:
    """rg's matches as they stream in; `_TooManyMatches` past `most` unless rg sorts."""
    in_order = "--sort=path" in args
    found: list[GrepMatch] = []
    async with _rg(root, args) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        while line := await proc.stdout.readline():
            path_bytes, _, rest = line.partition(b"\0")
            number, _, text = rest.partition(b":")
            path = _strip_dot(os.fsdecode(path_bytes))
            if not number.isdigit() or not accept(path):
                continue
            found.append(GrepMatch(path, int(number), clip_line(text.decode("utf-8", "replace"))))
            if len(found) >= most:
                if in_order:
                    break
                raise _TooManyMatches
        complaint = b"" if found else await proc.stderr.read(8192)
    if proc.returncode == 2 and not found and complaint.strip():
        reason = complaint.decode("utf-8", "replace").strip().splitlines()[-1]
        raise BackendError(f"invalid regular expression (ripgrep: {reason}). {RG_SYNTAX}")
    return found


async def list_files(
    root: Path,
    start: str = "",
    *,
    name_glob: str | None = None,
    use_rg: bool | None = None,
    exclude: tuple[str, ...] = (),
) -> list[str]:
    """Non-ignored files under `start`, in path order. `name_glob` (a pattern for the file
    name, no `/`) may narrow the list; callers still match their full pattern."""
    if use_rg is None:
        use_rg = ripgrep() is not None
    if use_rg:
        files = await rg_files(root, start, name_glob, exclude)
    else:
        files = await asyncio.to_thread(py_files, root, start, exclude)
    return sorted(files, key=path_order)


async def grep_files(
    root: Path,
    pattern: str,
    start: str = "",
    glob: str | None = None,
    *,
    regex: bool = False,
    ignore_case: bool = False,
    limit: int = 1000,
    use_rg: bool | None = None,
    exclude: tuple[str, ...] = (),
) -> list[GrepMatch]:
    if use_rg is None:
        use_rg = ripgrep() is not None
    if use_rg:
        return await rg_grep(
            root,
            pattern,
            start,
            glob,
            regex=regex,
            ignore_case=ignore_case,
            limit=limit,
            exclude=exclude,
        )
    if regex:
        request = {"root": str(root), "start": start, "glob": glob, "exclude": list(exclude)}
        return await _in_worker(request, pattern, ignore_case=ignore_case, limit=limit)
    return await asyncio.to_thread(
        py_grep,
        root,
        pattern,
        start,
        glob,
        regex=False,
        ignore_case=ignore_case,
        limit=limit,
        exclude=exclude,
    )
