"""FilesystemBackend: the editor workspace on disk, confined to its root."""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from deepacp.backends import search
from deepacp.backends.atomic import keep_write_journal as keep_write_journal
from deepacp.backends.atomic import replace_file
from deepacp.backends.base import BaseBackend
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.globs import GlobError
from deepacp.backends.nofollow import read_file
from deepacp.backends.paths import clean_path, confine, to_workspace_path
from deepacp.backends.protocol import MAX_TEXT_BYTES, Backend, Entry, GrepMatch, GrepQuery

MAX_LS_ENTRIES = 1000
"""`ls` lists the first this many entries by name, and one more to tell there are more."""


def decode_text(data: bytes, path: str) -> str:
    """Decode file bytes as UTF-8 text, or explain why they are not text."""
    if b"\0" in data[:8192]:
        raise BackendError(f"{path} is a binary file; it cannot be read or edited as text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BackendError(
            f"{path} is not UTF-8 text (invalid byte at offset {exc.start}); "
            "it cannot be read or edited as text"
        ) from None


class FilesystemBackend(BaseBackend):
    """Files under `root_dir` on disk; nothing outside it is reachable."""

    def __init__(
        self,
        root_dir: str | Path,
        *,
        use_ripgrep: bool | None = None,
        hidden: Sequence[Path] = (),
    ) -> None:
        """`hidden`: folders under the root that are not part of the workspace (deepacp's
        own `$DEEPACP_HOME` when the workspace is `~`): unreachable by any path or link,
        and left out of listings and searches."""
        given = Path(root_dir).expanduser().absolute()
        if not given.is_dir():
            raise ValueError(f"workspace root {given} is not a directory")
        self.root = given.resolve()
        # Accept absolute paths under the root as given and as resolved (symlinked homes).
        self._roots = tuple(dict.fromkeys([given.as_posix(), self.root.as_posix()]))
        self.use_ripgrep = use_ripgrep
        inside = (Path(h).expanduser().absolute().resolve() for h in hidden)
        self.hidden = tuple(  # workspace paths; never the root itself
            h.relative_to(self.root).as_posix()
            for h in inside
            if h.is_relative_to(self.root) and h != self.root
        )

    def workspace_path(self, path: str) -> str:
        return to_workspace_path(path, *self._roots)

    def disk_path(self, path: str) -> Path:
        relative = self.workspace_path(path)
        return self.root / relative if relative else self.root

    def resolved_path(self, path: str) -> str:
        try:
            real = self.confined_path(path)
        except OSError as exc:  # a name too long, say: no path, so no rule can match it
            raise PathError(f"{path[:200]}: {exc.strerror or exc}") from None
        return self._below_root(real)

    def _below_root(self, real: Path) -> str:
        """The workspace path of `real`, a path `confine` returned."""
        return "" if real == self.root else real.relative_to(self.root).as_posix()

    def confined_path(self, path: str) -> Path:
        """The real path on disk for `path`, refusing anything that resolves outside."""
        return self._real(path)[1]

    def _real(self, path: str, *, follow_final: bool = True) -> tuple[str, Path]:
        relative = self.workspace_path(path)
        real = confine(self.root, relative, follow_final=follow_final)
        if self.hidden:
            resolved = "" if real == self.root else real.relative_to(self.root).as_posix()
            if search.is_excluded(relative, self.hidden) or search.is_excluded(
                resolved, self.hidden
            ):
                raise PathError(
                    f"{relative}: deepacp's own folder ($DEEPACP_HOME) is not part of the "
                    "workspace; of it the agent sees only /user/AGENTS.md and /user/skills"
                )
        return relative, real

    def _stat(self, relative: str, real: Path) -> os.stat_result:
        try:
            return real.stat()
        except FileNotFoundError:
            raise NotFoundError(f"{relative or '.'}: no such file or directory") from None
        except OSError as exc:
            raise BackendError(f"{relative or '.'}: {exc.strerror}") from None

    async def ls(self, path: str = "") -> list[Entry]:
        relative, real = self._real(path)
        if not stat.S_ISDIR(self._stat(relative, real).st_mode):
            raise BackendError(f"{relative} is a file, not a directory; use read_file")
        prefix = f"{relative}/" if relative else ""
        with os.scandir(real) as scan:  # a folder may hold 200k files: keep only the first
            shown = (c for c in scan if not search.is_excluded(prefix + c.name, self.hidden))
            children = heapq.nsmallest(MAX_LS_ENTRIES + 1, shown, key=lambda e: e.name)
        entries: list[Entry] = []
        for child in children:
            child_path = prefix + child.name
            try:
                is_dir = child.is_dir()
                size = None if is_dir else child.stat().st_size
            except OSError:
                is_dir, size = False, None
            entries.append(Entry(child_path, is_dir, size))
        return entries

    async def read_text(self, path: str) -> str:
        relative, real = self._real(path)
        info = self._stat(relative, real)
        if stat.S_ISDIR(info.st_mode):
            raise BackendError(f"{relative or '.'} is a directory; use ls to list it")
        if not stat.S_ISREG(info.st_mode):
            raise BackendError(f"{relative} is not a regular file")
        if info.st_size > MAX_TEXT_BYTES:
            raise BackendError(
                f"{relative} is {info.st_size / 1e6:.1f} MB, too large to read whole; "
                "use grep to find the lines you need"
            )
        data = await asyncio.to_thread(read_file, self.root, self._below_root(real), MAX_TEXT_BYTES)
        return decode_text(data, relative)

    async def write_text(self, path: str, content: str) -> None:
        relative, real = self._real(path)
        if not relative:
            raise BackendError("cannot write to the workspace root itself; give a file path")
        if real.is_dir():
            raise BackendError(f"{relative} is a directory")
        if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            raise BackendError(f"content for {relative} is larger than {MAX_TEXT_BYTES} bytes")
        try:
            replace_file(self.root, self._below_root(real), content.encode("utf-8"))
        except BackendError as exc:
            raise type(exc)(f"cannot write {exc}") from None

    async def delete(self, path: str) -> None:
        relative, real = self._real(path, follow_final=False)
        if not relative:
            raise BackendError("refusing to delete the workspace root")
        try:
            if real.is_symlink() or not real.is_dir():
                real.unlink()
            else:
                real.rmdir()
        except FileNotFoundError:
            raise NotFoundError(f"{relative}: no such file or directory") from None
        except OSError as exc:
            if os.path.isdir(real):
                raise BackendError(f"{relative} is a directory that is not empty") from None
            raise BackendError(f"cannot delete {relative}: {exc.strerror}") from None

    def _search_start(self, path: str) -> str:
        relative, real = self._real(path)
        self._stat(relative, real)
        return relative

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        start = self._search_start(path)
        pattern = glob_pattern(pattern, self)
        rest, _, last = pattern.rpartition("/")
        braces_apart = "{" in rest or "}" in rest  # a {…} spanning `/`: rg cannot take part
        name_glob = None if "**" in last or braces_apart else last  # rg skips most files
        # `**/name` where the name has only `*`, `?` and plain characters, which rg reads
        # as we do (and can take: no `:`): rg's name filter is the whole test.
        plain_name = name_glob is not None and not set(last) & set("[]{}\\:")
        name_decides = rest == "**" and plain_name
        prefix = f"{start}/" if start else ""
        matcher = search.compile_glob(pattern).matcher
        return await search.glob_files(
            self.root,
            start,
            (lambda f: matcher(f.removeprefix(prefix))) if prefix else matcher,
            limit=limit,
            name_glob=name_glob,
            name_decides=name_decides and (self.root / start).is_dir(),
            use_rg=self.use_ripgrep,
            exclude=self.hidden,
        )

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        query = dataclasses.replace(query, path=self._search_start(query.path))
        return await search.grep_files(
            self.root, query, use_rg=self.use_ripgrep, exclude=self.hidden
        )


def glob_pattern(pattern: str, backend: Backend) -> str:
    """Validate a glob pattern; an absolute one must point inside the workspace."""
    if not pattern or "\0" in pattern:
        raise BackendError("glob pattern is empty")
    if pattern.startswith("/"):
        pattern = backend.workspace_path(pattern) or "*"
    if ".." in pattern.split("/"):
        raise PathError(f"glob pattern {pattern!r} climbs out of the search directory")
    clean_path(pattern.replace("*", "x").replace("?", "x"))
    try:
        search.compile_glob(pattern)
    except GlobError as exc:
        raise BackendError(str(exc)) from None
    return pattern
