from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore

from deepacp.backends import (
    BackendError,
    CompositeBackend,
    FilesystemBackend,
    GrepQuery,
    StoreBackend,
)


async def test_routes_by_absolute_prefix(tmp_path: Path) -> None:
    store = StoreBackend(InMemoryStore(), namespace=("t",))
    backend = CompositeBackend(FilesystemBackend(tmp_path), {"/memories/": store})
    await backend.write_text("/memories/prefs.md", "likes tabs")
    await backend.write_text("memories/local.md", "a workspace folder of the same name")
    assert await backend.read_text("/memories/prefs.md") == "likes tabs"
    assert (tmp_path / "memories" / "local.md").exists()
    assert not (tmp_path / "memories" / "prefs.md").exists()
    assert [e.path for e in await backend.ls("/memories/")] == ["/memories/prefs.md"]
    assert [m.path for m in await backend.grep(GrepQuery("tabs", "/memories/"))] == [
        "/memories/prefs.md"
    ]
    assert await backend.glob("*.md", "/memories") == ["/memories/prefs.md"]
    before, after = await backend.edit("/memories/prefs.md", "tabs", "spaces")
    assert (before, after) == ("likes tabs", "likes spaces")
    await backend.delete("/memories/prefs.md")
    with pytest.raises(BackendError, match="no such file"):
        await backend.read_text("/memories/prefs.md")
    with pytest.raises(BackendError, match="outside"):
        await backend.read_text("/memories/../../etc/passwd")


async def test_store_backend_is_shared_across_instances() -> None:
    store = InMemoryStore()
    await StoreBackend(store, ("a",)).write_text("notes/x.md", "one")
    assert await StoreBackend(store, ("a",)).read_text("notes/x.md") == "one"
    with pytest.raises(BackendError):
        await StoreBackend(store, ("b",)).read_text("notes/x.md")
    assert [e.path for e in await StoreBackend(store, ("a",)).ls("")] == ["notes"]
