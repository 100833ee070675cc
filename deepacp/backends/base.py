"""What backends share: the default behaviour (`BaseBackend`) and delegation for wrappers
(`DelegatingBackend`); the design is explained in `deepacp.backends.protocol`."""

from __future__ import annotations

from pathlib import Path
from typing import Generic, TypeVar

from deepacp.backends.protocol import (
    Backend,
    Entry,
    GrepMatch,
    GrepQuery,
    Shell,
    replace_exact,
)


class BaseBackend(Backend):
    """The base of every backend: no shell, no disk paths, no links, and `edit` through
    the backend's own `read_text` and `write_text`. A subclass implements the rest."""

    @property
    def shell(self) -> Shell | None:
        return None

    async def edit(
        self, path: str, old: str, new: str, *, replace_all: bool = False
    ) -> tuple[str, str]:
        before = await self.read_text(path)
        after, _ = replace_exact(before, old, new, replace_all=replace_all, path=path)
        await self.write_text(path, after)
        return before, after

    def disk_path(self, path: str) -> Path | None:
        return None

    def resolved_path(self, path: str) -> str:
        return self.workspace_path(path)


B = TypeVar("B", bound=Backend)


class DelegatingBackend(BaseBackend, Generic[B]):
    """A wrapper: whatever a subclass does not override goes to `inner`, the shell
    included — except `edit`, which stays `BaseBackend`'s (through the wrapper's reads and
    writes), so a wrapper that changes reads or writes changes edits with them."""

    def __init__(self, inner: B) -> None:
        self.inner = inner

    @property
    def shell(self) -> Shell | None:
        return self.inner.shell

    def workspace_path(self, path: str) -> str:
        return self.inner.workspace_path(path)

    def disk_path(self, path: str) -> Path | None:
        return self.inner.disk_path(path)

    def resolved_path(self, path: str) -> str:
        return self.inner.resolved_path(path)

    async def ls(self, path: str = "") -> list[Entry]:
        return await self.inner.ls(path)

    async def read_text(self, path: str) -> str:
        return await self.inner.read_text(path)

    async def write_text(self, path: str, content: str) -> None:
        await self.inner.write_text(path, content)

    async def delete(self, path: str) -> None:
        await self.inner.delete(path)

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        return await self.inner.glob(pattern, path, limit=limit)

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        return await self.inner.grep(query)
