"""StoreBackend: files in a LangGraph BaseStore, shared across threads, namespaced."""

from __future__ import annotations

from typing import Any

from deepacp.backends.errors import BackendError
from deepacp.backends.keyvalue import KeyValueBackend

MAX_LISTED = 100_000


class StoreBackend(KeyValueBackend):
    """Files as items of `store` under `namespace` (the run's store when `store` is None)."""

    def __init__(
        self, store: Any = None, namespace: tuple[str, ...] = ("deepacp", "files")
    ) -> None:
        self._store = store
        self.namespace = namespace

    def _get_store(self) -> Any:
        if self._store is not None:
            return self._store
        from langgraph.config import get_store

        try:
            return get_store()
        except RuntimeError:
            raise BackendError(
                "StoreBackend has no store: pass one, or run inside an agent"
            ) from None

    async def _load(self, path: str) -> str | None:
        item = await self._get_store().aget(self.namespace, path)
        return None if item is None else item.value.get("content")

    async def _list(self) -> list[str]:
        items = await self._get_store().asearch(self.namespace, limit=MAX_LISTED)
        return [item.key for item in items if tuple(item.namespace) == self.namespace]

    async def _save(self, path: str, content: str) -> None:
        await self._get_store().aput(self.namespace, path, {"content": content})

    async def _remove(self, path: str) -> None:
        await self._get_store().adelete(self.namespace, path)
