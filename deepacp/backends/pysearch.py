"""The pure-Python search: a sorted walk that honours .gitignore, and grep over files read in
pieces (never whole) or over texts held in memory. What ripgrep does, for when it is not
installed and for the in-memory backends; `search` chooses between them."""

from __future__ import annotations

import operator
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from deepacp.backends.globs import filter_matches
from deepacp.regular import read_regular
from deepacp.secrets import clip

MAX_LINE_CHARS = 300
SKIPPED_DIRS = frozenset({".git"})
MAX_GITIGNORE_BYTES = 1 << 20
READ_CHUNK = 1 << 20
"""Files are read in pieces of this size."""
LONG_LINE = 4 << 20
"""A line longer than this is matched in overlapping windows, never held whole."""
WINDOW_OVERLAP = 4096


@dataclass(frozen=True, slots=True)
class GrepQuery:
    """What to search for and where: passed whole through every backend layer.

    `path` is the file or folder to search as the caller wrote it (a backend that routes or
    resolves it passes a query with its own form of the path on); `glob` keeps only files
    whose path below `path` (or, without a `/`, whose name) matches; `limit` caps the
    matches, the first in path order."""

    pattern: str
    path: str = ""
    glob: str | None = None
    regex: bool = False
    ignore_case: bool = False
    limit: int = 1000


@dataclass(frozen=True, slots=True)
class GrepMatch:
    path: str
    line: int
    text: str


path_order: Callable[[str], str] = operator.methodcaller("replace", "/", "\0")
"""A sort key for the order a sorted walk visits paths in, segment by segment (`a/b`
before `a-b` before `a.txt`): the path with `/` as NUL, which sorts before any name. (A
methodcaller, not a function: sorting a 200k-file listing calls it for every path.)"""


def match_order(match: GrepMatch) -> tuple[str, int]:
    return path_order(match.path), match.line


def _load_gitignore(directory: Path) -> pathspec.GitIgnoreSpec | None:
    """The folder's .gitignore; none if it is not a regular file (a link to a device or a
    FIFO is never read) or is larger than `MAX_GITIGNORE_BYTES`."""
    try:
        data = read_regular(directory / ".gitignore", MAX_GITIGNORE_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """Git semantics: the deepest .gitignore with a matching pattern decides."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return result.include
    return False


def not_ignored(files: Iterable[str], gitignores: dict[str, str]) -> list[str]:
    """The workspace paths in `files` that no .gitignore excludes, by the same rules as
    `walk_files`: `gitignores` maps a folder (a workspace path) to its .gitignore's text."""
    specs = {d: pathspec.GitIgnoreSpec.from_lines(t.splitlines()) for d, t in gitignores.items()}

    def chain(folder: str) -> list[tuple[str, pathspec.GitIgnoreSpec]]:
        parts = folder.split("/") if folder else []
        bases = ["/".join(parts[:depth]) for depth in range(len(parts) + 1)]
        return [(base, specs[base]) for base in bases if base in specs]

    verdicts: dict[str, bool] = {"": False}

    def folder_ignored(folder: str) -> bool:
        if folder not in verdicts:
            parent = folder.rpartition("/")[0]
            verdicts[folder] = folder_ignored(parent) or _ignored(chain(parent), folder, True)
        return verdicts[folder]

    kept = []
    for path in files:
        folder = path.rpartition("/")[0]
        if not folder_ignored(folder) and not _ignored(chain(folder), path, False):
            kept.append(path)
    return kept


def is_excluded(path: str, exclude: Iterable[str]) -> bool:
    """True when the workspace path is one of the `exclude` folders or inside one."""
    return any(path == folder or path.startswith(folder + "/") for folder in exclude)


def walk_files(root: Path, start: str = "", exclude: tuple[str, ...] = ()) -> Iterator[str]:
    """Yield workspace paths of the regular files under `start`, honouring .gitignore, in
    path order; folders in `exclude` (workspace paths) are not entered."""
    specs = _specs_above(root, start)
    if specs is None or is_excluded(start, exclude):
        return
    yield from _walk(root, start, specs, exclude)


def _specs_above(
    root: Path, rel: str, *, is_dir: bool = True
) -> list[tuple[str, pathspec.GitIgnoreSpec]] | None:
    """The .gitignore files that apply inside the workspace path `rel` (those of the
    folders above it), or None when `rel` itself is ignored or in a `SKIPPED_DIRS` folder."""
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    parts = rel.split("/") if rel else []
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        if spec := _load_gitignore(root / base if base else root):
            specs.append((base, spec))
        folder = is_dir or depth < len(parts) - 1
        if (folder and parts[depth] in SKIPPED_DIRS) or _ignored(
            specs, "/".join(parts[: depth + 1]), folder
        ):
            return None
    return specs


def is_ignored(root: Path, rel: str, *, is_dir: bool = False) -> bool:
    """Whether the workspace path `rel` is one a walk of `root` skips (.gitignore'd, or in
    a `SKIPPED_DIRS` folder), by the .gitignore files on disk."""
    return _specs_above(root, rel, is_dir=is_dir) is None


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


def make_matcher(query: GrepQuery) -> re.Pattern[str]:
    flags = re.IGNORECASE if query.ignore_case else 0
    return re.compile(query.pattern if query.regex else re.escape(query.pattern), flags)


def clip_line(line: str) -> str:
    line = line.rstrip("\r\n")
    if len(line) > MAX_LINE_CHARS:
        return clip(line, MAX_LINE_CHARS) + " … [line clipped]"
    return line


def grep_text(path: str, text: str, matcher: re.Pattern[str]) -> Iterator[GrepMatch]:
    for number, line in enumerate(text.splitlines(), start=1):
        if matcher.search(line):
            yield GrepMatch(path, number, clip_line(line))


def grep_texts_now(items: Iterable[tuple[str, str]], query: GrepQuery) -> list[GrepMatch]:
    """grep over (path, text) pairs, in this process (literal patterns, or the worker);
    the caller has already chosen the texts (`query.path` and `query.glob` are not used)."""
    matcher, limit = make_matcher(query), query.limit
    found: list[GrepMatch] = []
    for path, text in sorted(items, key=lambda item: path_order(item[0])):
        if "\0" in text:
            continue
        for match in grep_text(path, text, matcher):
            found.append(match)
            if len(found) >= limit:
                return found
    return found


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


def py_files(root: Path, start: str = "", exclude: tuple[str, ...] = ()) -> Iterator[str]:
    """The files `walk_files` yields under `start`, or `start` itself when it is a file."""
    target = root / start if start else root
    if start and target.is_file() and not target.is_symlink():
        return iter([] if is_excluded(start, exclude) else [start])
    return walk_files(root, start, exclude)


def relative_to(path: str, start: str) -> str:
    return path[len(start) + 1 :] if start and path.startswith(start + "/") else path


def py_grep(root: Path, query: GrepQuery, exclude: tuple[str, ...] = ()) -> list[GrepMatch]:
    """The pure-Python search of a tree (`query.path` a workspace path): a sorted walk, files
    read in pieces, stopping at the limit. Runs in a thread for literal patterns and in the
    worker for regexes."""
    matcher = make_matcher(query)
    start, glob, limit = query.path, query.glob, query.limit
    found: list[GrepMatch] = []
    target = root / start if start else root
    files = [start] if start and target.is_file() else walk_files(root, start, exclude)
    for path in files:
        if is_excluded(path, exclude):
            continue
        if glob and not filter_matches(glob, relative_to(path, start)):
            continue
        found.extend(grep_file(path, root / path, matcher, limit - len(found)))
        if len(found) >= limit:
            break
    return found
