"""StateBackend: files in the graph state's `files` channel, seen and changed through a
`state_scope`, deletions as tombstones, routed backends kept apart by a key prefix."""

from __future__ import annotations

import pytest

from deepacp.backends import (
    BackendError,
    CompositeBackend,
    GrepQuery,
    NotFoundError,
    PathError,
    StateBackend,
    state_scope,
)
from deepacp.backends.state import FileRecord, StateScope, merge_files


def record(content: str) -> FileRecord:
    return FileRecord(content=content, modified_at="2025-01-01T00:00:00+00:00")


def written(scope: StateScope, path: str) -> FileRecord:
    """What the run wrote to `path` (not a tombstone)."""
    update = scope.updates[path]
    assert update is not None
    return update


FILES = {
    "src/app.py": record("print('state')\n"),
    "src/util.py": record("def helper():\n    return 1\n"),
    "README.md": record("# project\n"),
    "/large_tool_results/r1": record("offloaded output\n"),
}


async def test_outside_a_scope_there_is_no_state() -> None:
    with pytest.raises(BackendError, match="only usable inside an agent run"):
        await StateBackend().read_text("README.md")


async def test_reads_see_the_scope_and_writes_are_recorded_not_applied() -> None:
    backend = StateBackend()
    with state_scope(FILES) as scope:
        assert await backend.read_text("src/app.py") == "print('state')\n"
        await backend.write_text("src/app.py", "print('changed')\n")
        await backend.write_text("/docs/new.md", "new\n")  # absolute: from the root `/`
        assert await backend.read_text("src/app.py") == "print('changed')\n"
        assert await backend.read_text("docs/new.md") == "new\n"
    assert FILES["src/app.py"]["content"] == "print('state')\n"
    assert set(scope.updates) == {"src/app.py", "docs/new.md"}
    assert written(scope, "src/app.py")["content"] == "print('changed')\n"
    assert written(scope, "docs/new.md")["modified_at"]


async def test_each_scope_sees_only_its_own_state() -> None:
    backend = StateBackend()
    with state_scope(FILES):
        with state_scope({"other.txt": record("inner\n")}) as inner:
            await backend.write_text("inner.txt", "x")
            with pytest.raises(NotFoundError):
                await backend.read_text("README.md")
        assert await backend.read_text("README.md") == "# project\n"
        with pytest.raises(NotFoundError):
            await backend.read_text("inner.txt")
    assert set(inner.updates) == {"inner.txt"}


async def test_a_deletion_is_a_tombstone_that_hides_the_file() -> None:
    backend = StateBackend()
    with state_scope(FILES) as scope:
        await backend.delete("src/app.py")
        with pytest.raises(NotFoundError):
            await backend.read_text("src/app.py")
        with pytest.raises(NotFoundError):
            await backend.delete("src/app.py")
        assert [e.path for e in await backend.ls("src")] == ["src/util.py"]
        assert await backend.glob("**/*.py") == ["src/util.py"]
        assert await backend.grep(GrepQuery("state")) == []
    assert scope.updates == {"src/app.py": None}


def test_tombstones_survive_merges_into_the_channel() -> None:
    merged = merge_files(FILES, {"src/app.py": None, "new.txt": record("n\n")})
    assert "src/app.py" not in merged and merged["new.txt"]["content"] == "n\n"
    assert merge_files(merged, {"src/app.py": record("again\n")})["src/app.py"]["content"] == (
        "again\n"
    )
    assert merge_files(None, {"gone": None}) == {}


async def test_a_prefixed_backend_keeps_its_files_apart() -> None:
    workspace, results = StateBackend(), StateBackend("/large_tool_results/")
    with state_scope(FILES) as scope:
        assert await results.read_text("r1") == "offloaded output\n"
        assert [e.path for e in await results.ls("")] == ["r1"]
        assert [e.path for e in await workspace.ls("")] == ["README.md", "src"]
        await results.write_text("r2", "more\n")
        with pytest.raises(NotFoundError):
            await workspace.read_text("r2")
    assert set(scope.updates) == {"/large_tool_results/r2"}


async def test_routed_through_a_composite_the_prefix_is_the_key() -> None:
    backend = CompositeBackend(StateBackend(), {"/scratch/": StateBackend("/scratch/")})
    with state_scope({}) as scope:
        await backend.write_text("/scratch/notes.md", "scratch\n")
        await backend.write_text("notes.md", "workspace\n")
        assert await backend.read_text("/scratch/notes.md") == "scratch\n"
        assert [m.path for m in await backend.grep(GrepQuery("scratch", "/scratch/"))] == [
            "/scratch/notes.md"
        ]
        assert await backend.glob("*.md", "/scratch") == ["/scratch/notes.md"]
    assert set(scope.updates) == {"/scratch/notes.md", "notes.md"}


async def test_files_and_folders_are_told_apart() -> None:
    backend = StateBackend()
    with state_scope(FILES):
        with pytest.raises(BackendError, match="is a directory"):
            await backend.read_text("src")
        with pytest.raises(BackendError, match="is a file"):
            await backend.ls("README.md")
        with pytest.raises(NotFoundError):
            await backend.ls("nowhere")
        with pytest.raises(BackendError, match="root"):
            await backend.write_text("", "x")
        with pytest.raises(BackendError, match="larger than"):
            await backend.write_text("big.txt", "x" * (10 * 1024 * 1024 + 1))
        with pytest.raises(PathError):
            await backend.read_text("../escape")


async def test_edit_replaces_exact_text_and_records_the_result() -> None:
    backend = StateBackend()
    with state_scope(FILES) as scope:
        before, after = await backend.edit("src/util.py", "return 1", "return 2")
        with pytest.raises(BackendError, match="not found"):
            await backend.edit("src/util.py", "return 1", "return 3")
    assert (before, after) == ("def helper():\n    return 1\n", "def helper():\n    return 2\n")
    assert written(scope, "src/util.py")["content"] == after


async def test_grep_and_glob_scope_by_path_and_glob() -> None:
    backend = StateBackend()
    with state_scope(FILES):
        await backend.write_text("src/extra.md", "return nothing\n")
        found = await backend.grep(GrepQuery("return", "src", glob="*.py"))
        assert [(m.path, m.line) for m in found] == [("src/util.py", 2)]
        found = await backend.grep(GrepQuery(r"^def \w+", regex=True))
        assert [m.text for m in found] == ["def helper():"]
        assert await backend.glob("*.md") == ["README.md"]
        assert await backend.glob("**/*.md") == ["README.md", "src/extra.md"]
        assert await backend.glob("*", "src", limit=2) == ["src/app.py", "src/extra.md"]
        with pytest.raises(NotFoundError):
            await backend.grep(GrepQuery("x", "nowhere"))
