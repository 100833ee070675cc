"""glob and grep over a workspace: ripgrep when it is installed, pure Python otherwise.

Both paths give the same results: files ignored by a `.gitignore` (at any level, with git's
semantics) are skipped, `.git` is skipped, symlinks are not followed, hidden files are
searched, binary files (a NUL byte) never match. Results are sorted by path, then line.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

MAX_LINE_CHARS = 300
SKIPPED_DIRS = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class GrepMatch:
    path: str
    line: int
    text: str


@functools.cache
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob to a regex over `/`-separated paths.

    `*` and `?` stay within one segment, `**/` spans any number of directories (zero
    included), `[...]` is a character class and `{a,b}` an alternation.
    """
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    out.extend(")" * depth)
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, relative_path: str) -> bool:
    """Match a path (relative to the search start) against a glob pattern."""
    return compile_glob(pattern).match(relative_path) is not None


def filter_matches(glob: str, relative_path: str) -> bool:
    """grep's file filter: a pattern without `/` matches the file name at any depth."""
    if "/" in glob:
        return glob_matches(glob, relative_path)
    return glob_matches(glob, relative_path.rsplit("/", 1)[-1])


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


def walk_files(root: Path, start: str = "") -> Iterator[str]:
    """Yield workspace paths of the regular files under `start`, honouring .gitignore."""
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
    yield from _walk(root, start, specs)


def _walk(
    root: Path, rel_dir: str, specs: list[tuple[str, pathspec.GitIgnoreSpec]]
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
            if entry.name in SKIPPED_DIRS or _ignored(specs, rel, True):
                continue
            yield from _walk(root, rel, specs)
        elif stat.S_ISREG(mode) and not _ignored(specs, rel, False):
            yield rel


def make_matcher(pattern: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(pattern if regex else re.escape(pattern), flags)


def grep_text(path: str, text: str, matcher: re.Pattern[str]) -> Iterator[GrepMatch]:
    for number, line in enumerate(text.splitlines(), start=1):
        if matcher.search(line):
            yield GrepMatch(path, number, clip_line(line))


def clip_line(line: str) -> str:
    line = line.rstrip("\r\n")
    if len(line) > MAX_LINE_CHARS:
        return line[:MAX_LINE_CHARS] + " … [line clipped]"
    return line


def grep_texts(
    items: Iterable[tuple[str, str]], matcher: re.Pattern[str], limit: int
) -> list[GrepMatch]:
    """grep over (path, text) pairs; used by the in-memory backends."""
    found: list[GrepMatch] = []
    for path, text in sorted(items):
        if "\0" in text:
            continue
        for match in grep_text(path, text, matcher):
            found.append(match)
            if len(found) >= limit:
                return found
    return found


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


async def _run_rg(root: Path, args: list[str], limit_lines: int | None) -> tuple[list[bytes], int]:
    """Run rg in `root`; return its stdout lines (stopping after `limit_lines`) and exit code."""
    proc = await asyncio.create_subprocess_exec(
        ripgrep() or "rg",
        *_RG_COMMON,
        *args,
        cwd=root,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        stdin=asyncio.subprocess.DEVNULL,
        limit=2**24,
    )
    assert proc.stdout is not None
    lines: list[bytes] = []
    read_all = False
    try:
        while line := await proc.stdout.readline():
            lines.append(line)
            if limit_lines is not None and len(lines) >= limit_lines:
                break
        else:
            read_all = True
    finally:
        # Kill only a process we stop reading: Popen.kill() polls, and a poll that reaps an
        # exited rg before asyncio's child watcher does makes its exit code read 255.
        if not read_all and proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        await proc.wait()
    return lines, proc.returncode


def _rg_target(start: str) -> str:
    return start or "."


def _strip_dot(path: str) -> str:
    return path[2:] if path.startswith("./") else path


async def rg_files(root: Path, start: str = "", name_glob: str | None = None) -> list[str]:
    args = ["--files"] + ([f"--glob={name_glob}"] if name_glob else [])
    lines, _ = await _run_rg(root, [*args, "--", _rg_target(start)], None)
    out: list[str] = []
    for raw in b"".join(lines).split(b"\0"):
        if raw := raw.strip(b"\n"):
            out.append(_strip_dot(os.fsdecode(raw)))
    return out


async def rg_grep(
    root: Path,
    pattern: str,
    start: str,
    glob: str | None,
    *,
    regex: bool,
    ignore_case: bool,
    limit: int,
) -> list[GrepMatch]:
    args = ["--no-heading", "--line-number", "--with-filename"]
    if not regex:
        args.append("--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    if glob and "/" not in glob:
        args.append(f"--glob={glob}")
    args += ["--regexp", pattern, "--", _rg_target(start)]
    # When the glob needs path matching we filter afterwards, so read everything.
    post_filter = glob is not None and "/" in glob
    lines, code = await _run_rg(root, args, None if post_filter else limit)
    if code == 2 and not lines:
        # rg could not run this search (say, a regex feature only Python has): fall back.
        return await asyncio.to_thread(
            py_grep, root, pattern, start, glob, regex=regex, ignore_case=ignore_case, limit=limit
        )
    found: list[GrepMatch] = []
    for line in lines:
        path_bytes, _, rest = line.partition(b"\0")
        number, _, text = rest.partition(b":")
        path = _strip_dot(os.fsdecode(path_bytes))
        if post_filter and not filter_matches(glob, _relative_to(path, start)):
            continue
        found.append(GrepMatch(path, int(number), clip_line(text.decode("utf-8", "replace"))))
    found.sort(key=lambda m: (m.path, m.line))
    return found[:limit]


def _relative_to(path: str, start: str) -> str:
    return path[len(start) + 1 :] if start and path.startswith(start + "/") else path


def py_files(root: Path, start: str = "") -> list[str]:
    target = root / start if start else root
    if start and target.is_file() and not target.is_symlink():
        return [start]
    return list(walk_files(root, start))


def py_grep(
    root: Path,
    pattern: str,
    start: str,
    glob: str | None,
    *,
    regex: bool,
    ignore_case: bool,
    limit: int,
) -> list[GrepMatch]:
    matcher = make_matcher(pattern, regex=regex, ignore_case=ignore_case)
    found: list[GrepMatch] = []
    for path in py_files(root, start):
        if glob and not filter_matches(glob, _relative_to(path, start)):
            continue
        try:
            data = (root / path).read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue
        found.extend(grep_text(path, data.decode("utf-8", "replace"), matcher))
    found.sort(key=lambda m: (m.path, m.line))
    return found[:limit]


async def list_files(
    root: Path, start: str = "", *, name_glob: str | None = None, use_rg: bool | None = None
) -> list[str]:
    """Non-ignored files under `start`, sorted. `name_glob` (a pattern for the file name,
    no `/`) may narrow the list; callers still match their full pattern."""
    if use_rg is None:
        use_rg = ripgrep() is not None
    if use_rg:
        files = await rg_files(root, start, name_glob)
    else:
        files = await asyncio.to_thread(py_files, root, start)
    return sorted(files)


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
) -> list[GrepMatch]:
    if use_rg is None:
        use_rg = ripgrep() is not None
    if regex:
        re.compile(pattern)  # a bad regex is the caller's error, raised the same on both paths
    if use_rg:
        return await rg_grep(
            root, pattern, start, glob, regex=regex, ignore_case=ignore_case, limit=limit
        )
    return await asyncio.to_thread(
        py_grep, root, pattern, start, glob, regex=regex, ignore_case=ignore_case, limit=limit
    )
