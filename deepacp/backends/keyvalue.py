"""Shared file semantics for backends that keep files as path -> text records."""

from __future__ import annotations

from deepacp.backends import search
from deepacp.backends.base import BaseBackend
from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.filesystem import glob_pattern
from deepacp.backends.paths import to_workspace_path
from deepacp.backends.protocol import MAX_TEXT_BYTES, Entry, GrepMatch, GrepQuery


class KeyValueBackend(BaseBackend):
    """A virtual tree (root `/`) over four primitives: load, list, save, remove."""

    async def _load(self, path: str) -> str | None:
        raise NotImplementedError

    async def _list(self) -> list[str]:
        raise NotImplementedError

    async def _save(self, path: str, content: str) -> None:
        raise NotImplementedError

    async def _remove(self, path: str) -> None:
        raise NotImplementedError

    def workspace_path(self, path: str) -> str:
        return to_workspace_path(path, "/")

    async def ls(self, path: str = "") -> list[Entry]:
        base = self.workspace_path(path)
        prefix = f"{base}/" if base else ""
        if base and await self._load(base) is not None:
            raise BackendError(f"{base} is a file, not a directory; use read_file")
        entries: dict[str, Entry] = {}
        for file_path in await self._list():
            if not file_path.startswith(prefix):
                continue
            name, _, rest = file_path[len(prefix) :].partition("/")
            child = prefix + name
            if rest:
                entries.setdefault(child, Entry(child, True))
            else:
                entries[child] = Entry(child, False, len(await self._load(child) or ""))
        if base and not entries:
            raise NotFoundError(f"{base}: no such file or directory")
        return sorted(entries.values(), key=lambda e: e.path)

    async def read_text(self, path: str) -> str:
        relative = self.workspace_path(path)
        content = await self._load(relative) if relative else None
        if content is None:
            if not relative or any(p.startswith(relative + "/") for p in await self._list()):
                raise BackendError(f"{relative or '.'} is a directory; use ls to list it")
            raise NotFoundError(f"{relative}: no such file or directory")
        return content

    async def write_text(self, path: str, content: str) -> None:
        relative = self.workspace_path(path)
        if not relative:
            raise BackendError("cannot write to the root itself; give a file path")
        if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            raise BackendError(f"content for {relative} is larger than {MAX_TEXT_BYTES} bytes")
        await self._save(relative, content)

    async def delete(self, path: str) -> None:
        relative = self.workspace_path(path)
        if not relative or await self._load(relative) is None:
            raise NotFoundError(f"{relative or '.'}: no such file")
        await self._remove(relative)

    async def _under(self, path: str) -> tuple[str, list[str]]:
        start = self.workspace_path(path)
        paths = sorted(await self._list(), key=search.path_order)
        if not start:
            return start, paths
        if start in paths:
            return start, [start]
        under = [p for p in paths if p.startswith(start + "/")]
        if not under:
            raise NotFoundError(f"{start}: no such file or directory")
        return start, under

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        pattern = glob_pattern(pattern, self)
        start, paths = await self._under(path)
        prefix = f"{start}/" if start else ""
        return [p for p in paths if search.glob_matches(pattern, p.removeprefix(prefix))][:limit]

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        start, paths = await self._under(query.path)
        prefix = f"{start}/" if start else ""
        if glob := query.glob:
            paths = [p for p in paths if search.filter_matches(glob, p.removeprefix(prefix))]
        return await search.grep_texts([(p, await self._load(p) or "") for p in paths], query)
