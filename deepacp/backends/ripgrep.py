"""ripgrep: file listing and grep through the `rg` binary, its output streamed and cut
(never held whole), in the same order and with the same filters as the Python search.

rg reads every `.gitignore` it meets, whatever it is; a repository can make one a link to
`/dev/zero` (rg would eat the machine's memory), to a pipe or a FIFO (rg would wait
forever). So rg runs in a session of its own (no terminal to read), with a memory bound,
and when it dies of something but our own kill, or is silent for `RG_SILENCE` seconds,
`RipgrepFailed` says so and the caller searches in Python, which reads regular files
only."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

from deepacp.backends.errors import BackendError
from deepacp.backends.globs import filter_matches
from deepacp.backends.programs import trusted_program
from deepacp.backends.pysearch import (
    GrepMatch,
    GrepQuery,
    clip_line,
    is_excluded,
    match_order,
    relative_to,
)

RG_MAX_COLUMNS = 65536
"""ripgrep prints at most this much of a matching line (we show far less)."""
PARALLEL_MATCHES_PER_LIMIT = 8
RG_SYNTAX = (
    "grep's regular expressions are ripgrep's (Rust regex syntax): no look-around "
    "((?=…), (?!…), (?<=…), (?<!…)) and no backreferences (\\1); rewrite the pattern "
    "without them, or search for a simpler pattern and read the matches"
)


RG_SILENCE = 10.0
"""Seconds rg may go without a byte of output before it is taken for stuck."""
RG_MEMORY = 2 << 30
"""rg's heap at most (Linux: RLIMIT_DATA); files it maps to read do not count."""


class RipgrepFailed(Exception):
    """rg died or got stuck (a hostile `.gitignore`, say): search without it."""


def ripgrep(roots: Sequence[Path] = ()) -> str | None:
    """The `rg` binary: next to this interpreter (the `ripgrep` wheel puts it there), or on
    PATH; never one a command could have planted in the workspace `roots` (`trusted_program`)."""
    name = "rg.exe" if os.name == "nt" else "rg"
    here = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return trusted_program(name, roots, search=here)


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
    rg = ripgrep([root])
    if rg is None:
        raise RipgrepFailed("no rg that only root or you can change, outside the workspace")
    proc = await asyncio.create_subprocess_exec(
        rg,
        *_RG_COMMON,
        *args,
        cwd=root,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        limit=2 * RG_MAX_COLUMNS + 65536,
        start_new_session=True,
    )
    _bound_memory(proc.pid)
    assert proc.stdout is not None
    killed = False
    try:
        yield proc
    finally:
        # Kill only a process we stop reading: Popen.kill() polls, and a poll that reaps an
        # exited rg before asyncio's child watcher does makes its exit code read 255.
        if not proc.stdout.at_eof() and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
                killed = True
        await proc.wait()
    status = proc.returncode or 0
    if status < 0 and not killed:
        raise RipgrepFailed(f"rg died of signal {-status}")


def _bound_memory(pid: int) -> None:
    """Limit rg's heap (where the kernel can: Linux); it is set just after rg starts,
    which is early enough: the limit stops the next allocation, not only the first."""
    with contextlib.suppress(AttributeError, OSError):
        import resource

        resource.prlimit(pid, resource.RLIMIT_DATA, (RG_MEMORY, RG_MEMORY))


async def _heard(read: Awaitable[bytes]) -> bytes:
    """The next output of rg, or `RipgrepFailed` when it is silent too long."""
    try:
        return await asyncio.wait_for(read, RG_SILENCE)
    except TimeoutError:
        raise RipgrepFailed(f"rg said nothing for {RG_SILENCE:.0f} s") from None


def _rg_target(start: str) -> str:
    return start or "."


def _strip_dot(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _exclude_args(exclude: tuple[str, ...]) -> list[str]:
    return [f"--glob=!/{folder}" for folder in exclude if not set(folder) & set("*?[]{}!\\")]


async def rg_files(
    root: Path, start: str = "", name_glob: str | None = None, exclude: tuple[str, ...] = ()
) -> AsyncIterator[list[str]]:
    """The files rg lists under `start`, in batches as they stream in (in no order)."""
    args = ["--files", *_name_filter(name_glob), *_exclude_args(exclude)]
    rest = b""
    dot = not start  # rg names what it finds under "." as ./path
    async with _rg(root, [*args, "--", _rg_target(start)]) as proc:
        assert proc.stdout is not None
        while chunk := await _heard(proc.stdout.read(1 << 16)):
            end = chunk.rfind(b"\0")
            if end == -1:
                rest += chunk
                continue
            yield _listed(rest + chunk[:end], dot, exclude)
            rest = chunk[end + 1 :]
        if rest:
            yield _listed(rest, dot, exclude)


def _listed(names: bytes, dot: bool, exclude: tuple[str, ...]) -> list[str]:
    """Workspace paths of rg's NUL-separated names, decoded at once (a batch is large:
    the listing of a big tree spends most of its time here, per path)."""
    if not names:
        return []
    text = os.fsdecode(names)
    if dot:
        text = text.replace("\0./", "\0").removeprefix("./")
    paths = text.split("\0")
    if exclude:
        paths = [p for p in paths if not is_excluded(p, exclude)]
    return paths


def _name_filter(name_glob: str | None) -> list[str]:
    """rg's arguments keeping only files whose name matches `name_glob`, as a file type:
    unlike `--glob` (an override, which lists ignored files and `.git` when they match),
    a type leaves .gitignore and the `.git` exclusion in force. A name with `:` cannot be
    a type's glob: rg then lists every file (the caller matches each)."""
    if not name_glob or ":" in name_glob:
        return []
    return [f"--type-add=deepacpname:{name_glob}", "--type=deepacpname"]


def _rg_path_glob(glob: str, start: str) -> str | None:
    """The path glob as rg should see it (anchored at the root), or None to filter alone."""
    if set(start) & set("*?[]{}!\\"):
        return None
    return f"{start}/{glob}" if start else glob


class _TooManyMatches(Exception):
    """More matches than a parallel search should hold: search again in path order."""


async def rg_grep(root: Path, query: GrepQuery, exclude: tuple[str, ...] = ()) -> list[GrepMatch]:
    """grep a tree (`query.path` a workspace path). First a parallel search holding at most
    `PARALLEL_MATCHES_PER_LIMIT` × limit matches (then sorted and cut); when there are
    more, a search in path order (one rg thread) that stops at the limit. Either way the
    first matches in path order."""
    start, glob, limit = query.path, query.glob, query.limit
    args = ["--no-heading", "--line-number", "--with-filename"]
    args += [f"--max-columns={RG_MAX_COLUMNS}", "--max-columns-preview"]
    if not query.regex:
        args.append("--fixed-strings")
    if query.ignore_case:
        args.append("--ignore-case")
    if glob and "/" not in glob:  # rg skips what the glob excludes; we still check each path
        args += _name_filter(glob)
    elif glob and (rg_glob := _rg_path_glob(glob, start)) is not None:
        args.append(f"--glob={rg_glob}")
    args += _exclude_args(exclude)
    target = ["--regexp", query.pattern, "--", _rg_target(start)]

    decided: dict[str, bool] = {}

    def accept(path: str) -> bool:
        if path not in decided:
            decided[path] = not is_excluded(path, exclude) and (
                glob is None or filter_matches(glob, relative_to(path, start))
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
        while line := await _heard(proc.stdout.readline()):
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
