"""CompositeBackend: route virtual path prefixes (`/memories/`) to other backends."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from deepacp.backends.base import BaseBackend
from deepacp.backends.paths import clean_path
from deepacp.backends.protocol import Backend, Entry, GrepMatch, GrepQuery, Shell


class CompositeBackend(BaseBackend):
    """Longest-prefix routing by absolute virtual prefix; everything else goes to `default`.

    A route key is an absolute prefix such as `/large_tool_results/`. Only absolute paths
    are routed, so a workspace folder of the same name stays reachable by its relative
    path. Commands run in the default backend's shell.
    """

    def __init__(self, default: Backend, routes: dict[str, Backend]) -> None:
        self.default = default
        self.routes = sorted(
            ((("/" + key.strip("/") + "/"), backend) for key, backend in routes.items()),
            key=lambda item: -len(item[0]),
        )

    @property
    def shell(self) -> Shell | None:
        return self.default.shell

    def route(self, path: str) -> tuple[Backend, str, str]:
        """(backend, path inside it, prefix to put back on results)."""
        cleaned = clean_path(path)
        if cleaned.startswith("/"):
            for prefix, backend in self.routes:
                if (cleaned + "/").startswith(prefix):
                    return backend, cleaned[len(prefix) :], prefix
        return self.default, path, ""

    def workspace_path(self, path: str) -> str:
        backend, inner, prefix = self.route(path)
        return prefix + backend.workspace_path(inner)

    def disk_path(self, path: str) -> Path | None:
        backend, inner, _ = self.route(path)
        return backend.disk_path(inner)

    def resolved_path(self, path: str) -> str:
        backend, inner, prefix = self.route(path)
        return prefix + backend.resolved_path(inner)

    async def ls(self, path: str = "") -> list[Entry]:
        backend, inner, prefix = self.route(path)
        entries = await backend.ls(inner)
        return [Entry(prefix + e.path, e.is_dir, e.size) for e in entries]

    async def read_text(self, path: str) -> str:
        backend, inner, _ = self.route(path)
        return await backend.read_text(inner)

    async def write_text(self, path: str, content: str) -> None:
        backend, inner, _ = self.route(path)
        await backend.write_text(inner, content)

    async def edit(
        self, path: str, old: str, new: str, *, replace_all: bool = False
    ) -> tuple[str, str]:
        backend, inner, _ = self.route(path)
        return await backend.edit(inner, old, new, replace_all=replace_all)

    async def delete(self, path: str) -> None:
        backend, inner, _ = self.route(path)
        await backend.delete(inner)

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        backend, inner, prefix = self.route(path)
        return [prefix + p for p in await backend.glob(pattern, inner, limit=limit)]

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        backend, inner, prefix = self.route(query.path)
        found = await backend.grep(dataclasses.replace(query, path=inner))
        return [GrepMatch(prefix + m.path, m.line, m.text) for m in found]
