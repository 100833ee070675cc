"""OverlayBackend: the agent's changes over open documents over the disk, held in memory."""

from pathlib import Path

import pytest

from deepacp.backends import FilesystemBackend, GrepQuery, LocalShellBackend, ShellCommand
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.overlay import OverlayBackend


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('disk')\n")
    (root / "src" / "util.py").write_text("def helper():\n    return 'disk'\n")
    (root / "README.md").write_text("# project\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    return root


def disk_state(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


def overlay_with_buffers(root: Path, buffers: dict[str, str]) -> OverlayBackend:
    """An overlay whose editor has `buffers` (workspace path -> unsaved text) open."""
    by_path = {root / path: text for path, text in buffers.items()}
    return OverlayBackend(FilesystemBackend(root), lambda path: by_path.get(path))


async def test_reads_prefer_agent_changes_then_open_documents_then_disk(workspace: Path) -> None:
    overlay = overlay_with_buffers(workspace, {"src/app.py": "print('buffer')\n"})
    assert await overlay.read_text("README.md") == "# project\n"
    assert await overlay.read_text("src/app.py") == "print('buffer')\n"
    await overlay.write_text("src/app.py", "print('agent')\n")
    assert await overlay.read_text("src/app.py") == "print('agent')\n"
    assert await overlay.read_text(str(workspace / "src" / "app.py")) == "print('agent')\n"


async def test_an_open_document_that_is_not_on_disk_can_be_read(workspace: Path) -> None:
    overlay = overlay_with_buffers(workspace, {"src/new.py": "unsaved\n"})
    assert await overlay.read_text("src/new.py") == "unsaved\n"
    with pytest.raises(NotFoundError):
        await overlay.read_text("src/missing.py")


async def test_writes_edits_and_deletions_never_touch_the_disk(workspace: Path) -> None:
    before = disk_state(workspace)
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.write_text("src/new/module.py", "x = 1\n")
    await overlay.write_text("README.md", "# rewritten\n")
    assert await overlay.edit("src/util.py", "'disk'", "'agent'") == (
        "def helper():\n    return 'disk'\n",
        "def helper():\n    return 'agent'\n",
    )
    await overlay.delete("src/app.py")
    assert disk_state(workspace) == before
    assert not (workspace / "src" / "new").exists()


async def test_changes_give_each_file_before_and_after(workspace: Path) -> None:
    overlay = overlay_with_buffers(workspace, {"src/util.py": "unsaved\n"})
    await overlay.write_text("src/new.py", "first\n")
    await overlay.write_text("src/new.py", "second\n")
    await overlay.edit("src/util.py", "unsaved", "edited")
    await overlay.delete("src/app.py")
    await overlay.write_text("README.md", "# changed\n")
    await overlay.write_text("README.md", "# project\n")  # back to where it started
    assert overlay.changes() == {
        "src/new.py": (None, "second\n"),
        "src/util.py": ("unsaved\n", "edited\n"),  # from the buffer the agent saw
        "src/app.py": ("print('disk')\n", None),
    }


async def test_a_deleted_file_is_gone_from_every_view(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.delete("src/app.py")
    with pytest.raises(NotFoundError):
        await overlay.read_text("src/app.py")
    with pytest.raises(NotFoundError):
        await overlay.delete("src/app.py")
    assert [e.path for e in await overlay.ls("src")] == ["src/util.py"]
    assert await overlay.glob("**/*.py") == ["src/util.py"]
    assert await overlay.grep(GrepQuery("disk")) == await overlay.grep(GrepQuery("return"))
    assert {m.path for m in await overlay.grep(GrepQuery("disk"))} == {"src/util.py"}
    await overlay.write_text("src/app.py", "back\n")
    assert await overlay.read_text("src/app.py") == "back\n"
    assert overlay.changes() == {"src/app.py": ("print('disk')\n", "back\n")}


async def test_only_files_can_be_deleted_or_written(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    with pytest.raises(BackendError, match="directory"):
        await overlay.delete("src")
    with pytest.raises(BackendError, match="directory"):
        await overlay.write_text("src", "x")
    with pytest.raises(BackendError, match="root"):
        await overlay.write_text("", "x")
    with pytest.raises(NotFoundError):
        await overlay.delete("nothing.txt")
    assert overlay.changes() == {}


async def test_ls_shows_new_files_and_folders(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.write_text("src/pkg/deep/mod.py", "x = 1\n")
    await overlay.write_text("src/extra.py", "y = 2\n")
    listing = {e.path: (e.is_dir, e.size) for e in await overlay.ls("src")}
    assert listing == {
        "src/app.py": (False, len("print('disk')\n")),
        "src/extra.py": (False, len("y = 2\n")),
        "src/pkg": (True, None),
        "src/util.py": (False, len("def helper():\n    return 'disk'\n")),
    }
    assert [e.path for e in await overlay.ls("src/pkg")] == ["src/pkg/deep"]
    assert [e.path for e in await overlay.ls("")] == ["README.md", "src"]


async def test_glob_sees_changed_files_and_keeps_the_limit(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.write_text("src/b_new.py", "b\n")
    await overlay.write_text("docs/guide.md", "guide\n")
    assert await overlay.glob("*.py", "src") == ["src/app.py", "src/b_new.py", "src/util.py"]
    assert await overlay.glob("**/*.md") == ["README.md", "docs/guide.md"]
    assert await overlay.glob("*.py", "src", limit=2) == ["src/app.py", "src/b_new.py"]


async def test_grep_searches_files_as_they_are_now(workspace: Path) -> None:
    (workspace / "README.md").write_text("# project\nTODO on disk\n")
    (workspace / "NOTES.md").write_text("TODO on disk\n")
    buffers = {"README.md": "# project\n\nTODO in the buffer\n", "NOTES.md": "done\n"}
    overlay = overlay_with_buffers(workspace, buffers)
    await overlay.write_text("src/new.py", "# TODO agent\n")
    await overlay.edit("src/util.py", "return 'disk'", "return 'TODO edited'")
    found = await overlay.grep(GrepQuery("TODO"))
    assert [(m.path, m.line, m.text) for m in found] == [
        ("README.md", 3, "TODO in the buffer"),
        ("src/new.py", 1, "# TODO agent"),
        ("src/util.py", 2, "    return 'TODO edited'"),
    ]
    assert [m.path for m in await overlay.grep(GrepQuery("TODO", "src"))] == [
        "src/new.py",
        "src/util.py",
    ]
    assert [m.path for m in await overlay.grep(GrepQuery("TODO", glob="new.*"))] == ["src/new.py"]
    assert [m.path for m in await overlay.grep(GrepQuery("todo", ignore_case=True, limit=1))] == [
        "README.md"
    ]
    assert await overlay.grep(GrepQuery("'disk'", "src/util.py")) == []


async def test_folders_only_the_agent_made_can_be_searched(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.write_text("pkg/sub/mod.py", "# TODO new\n")
    assert await overlay.glob("**/*.py", "pkg") == ["pkg/sub/mod.py"]
    assert [m.path for m in await overlay.grep(GrepQuery("TODO", "pkg"))] == ["pkg/sub/mod.py"]
    assert [m.line for m in await overlay.grep(GrepQuery("TODO", "pkg/sub/mod.py"))] == [1]
    with pytest.raises(BackendError, match="is a file"):
        await overlay.ls("pkg/sub/mod.py")
    for missing in (overlay.glob("*", "nowhere"), overlay.grep(GrepQuery("x", "nowhere"))):
        with pytest.raises(NotFoundError):
            await missing


async def test_deleted_files_do_not_eat_into_the_glob_limit(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.delete("src/app.py")
    assert await overlay.glob("**/*", limit=2) == ["README.md", "src/util.py"]


async def test_grep_regexes_run_over_changed_text(workspace: Path) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    await overlay.write_text("src/app.py", "value = 41\nvalue = 42\n")
    found = await overlay.grep(GrepQuery(r"value = 4[2-9]", regex=True))
    assert [(m.path, m.line) for m in found] == [("src/app.py", 2)]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "src/../../outside.txt"])
async def test_paths_outside_the_workspace_are_refused(workspace: Path, path: str) -> None:
    overlay = OverlayBackend(FilesystemBackend(workspace))
    with pytest.raises(PathError):
        await overlay.read_text(path)
    with pytest.raises(PathError):
        await overlay.write_text(path, "pwned")
    with pytest.raises(PathError):
        await overlay.delete(path)
    assert overlay.changes() == {}
    assert (workspace.parent / "outside.txt").read_text() == "outside\n"


async def test_a_link_out_of_the_workspace_is_refused(workspace: Path) -> None:
    (workspace / "link.txt").symlink_to(workspace.parent / "outside.txt")
    overlay = OverlayBackend(FilesystemBackend(workspace))
    with pytest.raises(PathError):
        await overlay.read_text("link.txt")
    with pytest.raises(PathError):
        await overlay.write_text("link.txt", "pwned")


async def test_unsandboxed_commands_run_on_disk_and_say_so(workspace: Path) -> None:
    assert OverlayBackend(FilesystemBackend(workspace)).shell is None
    overlay = OverlayBackend(LocalShellBackend(workspace))
    await overlay.write_text("README.md", "# only in the overlay\n")
    assert overlay.shell is not None
    result = await overlay.shell.execute(ShellCommand("cat README.md"))
    assert result.exit_code == 0 and result.output.startswith("# project\n")
    assert "ran on the files on disk, not on the proposal (the sandbox is off)" in result.output
