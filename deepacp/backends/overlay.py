"""OverlayBackend: copy-on-write over the workspace; the agent's changes become a proposal.

Reads see, in order: the agent's own changes, the editor's open documents (unsaved text),
the disk. Writes and deletions land in memory and never touch the disk; `changes()` gives
each changed file's text before and after, which the LSP face turns into edits the user
reviews. Commands (when the disk backend has a local shell) run over the overlay where the
kernel allows it, and what they write joins it (`deepacp.backends.proposal_shell`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from deepacp.backends import search
from deepacp.backends.base import DelegatingBackend
from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.proposal_shell import ProposalShell
from deepacp.backends.protocol import MAX_TEXT_BYTES, Entry, GrepMatch, GrepQuery, Shell
from deepacp.backends.shell import LocalShell

Documents = Callable[[Path], str | None]
"""The editor's text for an open file (by absolute path), or None when it is not open."""

T = TypeVar("T")


class OverlayBackend(DelegatingBackend[FilesystemBackend]):
    """The workspace on disk, with the agent's changes held in memory over it."""

    def __init__(self, disk: FilesystemBackend, documents: Documents | None = None) -> None:
        super().__init__(disk)
        self.documents = documents or (lambda path: None)
        self._new: dict[str, str | None] = {}
        self._base: dict[str, str | None] = {}

    def disk_path(self, path: str) -> Path:
        """Always a path on disk (the LSP face makes a file URI of it)."""
        return self.inner.disk_path(path)

    @property
    def shell(self) -> Shell | None:
        inner = self.inner.shell
        return ProposalShell(self, inner) if isinstance(inner, LocalShell) else inner

    def proposed(self) -> dict[str, str | None]:
        """Workspace path -> the agent's text for it now (None: it deletes the file)."""
        return {p: new for p, (_, new) in self.changes().items()}

    def changes(self) -> dict[str, tuple[str | None, str | None]]:
        """Workspace path -> (text the agent started from, text now); None: no file."""
        return {p: (self._base[p], new) for p, new in self._new.items() if self._base[p] != new}

    async def _current(self, relative: str) -> str | None:
        if relative in self._new:
            return self._new[relative]
        real = self.inner.confined_path(relative)
        document = self.documents(self.disk_path(relative))
        if document is not None:
            return document
        if not real.exists():
            return None
        return await self.inner.read_text(relative)

    async def read_text(self, path: str) -> str:
        relative = self.workspace_path(path)
        text = await self._current(relative)
        if text is None:
            raise NotFoundError(f"{relative}: no such file or directory")
        return text

    async def _change(self, relative: str, text: str | None) -> None:
        if relative not in self._base:
            self._base[relative] = await self._current(relative)
        self._new[relative] = text

    async def write_text(self, path: str, content: str) -> None:
        relative = self.workspace_path(path)
        if not relative:
            raise BackendError("cannot write to the workspace root itself; give a file path")
        if self.inner.confined_path(relative).is_dir():
            raise BackendError(f"{relative} is a directory")
        if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            raise BackendError(f"content for {relative} is larger than {MAX_TEXT_BYTES} bytes")
        await self._change(relative, content)

    async def delete(self, path: str) -> None:
        relative = self.workspace_path(path)
        if self.inner.confined_path(relative).is_dir():
            raise BackendError(f"{relative} is a directory; only files can be deleted here")
        if await self._current(relative) is None:
            raise NotFoundError(f"{relative}: no such file or directory")
        await self._change(relative, None)

    def _makes(self, start: str) -> bool:
        """Whether the agent's new files make `start` exist (as one of them, or a folder)."""
        return any(
            text is not None and (changed == start or changed.startswith(f"{start}/"))
            for changed, text in self._new.items()
        )

    async def _on_disk(self, start: str, found: Awaitable[list[T]]) -> list[T]:
        """What the disk has at `start`: nothing where only the agent's new files make it."""
        try:
            return await found
        except NotFoundError:
            if not self._makes(start):
                raise
            return []

    async def ls(self, path: str = "") -> list[Entry]:
        relative = self.workspace_path(path)
        if self._new.get(relative) is not None:
            raise BackendError(f"{relative} is a file, not a directory; use read_file")
        prefix = f"{relative}/" if relative else ""
        on_disk = await self._on_disk(relative, self.inner.ls(path))
        entries = {e.path: e for e in on_disk if self._new.get(e.path, "") is not None}
        for changed, text in self._new.items():
            if text is not None and changed.startswith(prefix):
                name = changed[len(prefix) :].split("/", 1)[0]
                child = prefix + name
                is_dir = "/" in changed[len(prefix) :]
                entries.setdefault(child, Entry(child, is_dir, None if is_dir else len(text)))
        return sorted(entries.values(), key=lambda e: e.path)

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        start = self.workspace_path(path)
        deleted = sum(text is None for text in self._new.values())  # may hide disk results
        found = set(
            await self._on_disk(start, self.inner.glob(pattern, path, limit=limit + deleted))
        )
        prefix = f"{start}/" if start else ""
        for changed, text in self._new.items():
            if text is None:
                found.discard(changed)
            elif changed.startswith(prefix) and search.glob_matches(
                pattern, changed[len(prefix) :]
            ):
                found.add(changed)
        return sorted(found, key=search.path_order)[:limit]

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        """Disk results, with files the overlay or an open document holds searched as they
        are now."""
        start = self.workspace_path(query.path)
        wider = dataclasses.replace(query, limit=query.limit * 2)
        on_disk = await self._on_disk(start, self.inner.grep(wider))
        prefix = f"{start}/" if start else ""
        candidates = {m.path for m in on_disk} | set(self._new)
        live: dict[str, str] = {}
        for relative in candidates:
            if relative != start and not relative.startswith(prefix):
                continue
            if query.glob and not search.filter_matches(query.glob, relative.removeprefix(prefix)):
                continue
            text = await self._current(relative)
            if text is not None:
                live[relative] = text
        return await search.grep_texts(live.items(), query)
