"""A corpus of hostile paths against every file tool: nothing outside the root is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepacp.backends import LocalShellBackend, StateBackend
from tests.support.paths import DISK_ONLY, LEXICAL

SECRET = "TOP-SECRET-CONTENT"

TOOLS = {
    "read_file": lambda p: {"file_path": p},
    "write_file": lambda p: {"file_path": p, "content": "pwned"},
    "edit_file": lambda p: {"file_path": p, "old_string": SECRET, "new_string": "pwned"},
    "delete": lambda p: {"file_path": p},
    "ls": lambda p: {"path": p},
    "glob": lambda p: {"pattern": "*", "path": p},
    "grep": lambda p: {"pattern": "SECRET", "path": p},
}


def test_corpus_is_large_enough() -> None:
    assert len(LEXICAL) + len(DISK_ONLY) >= 50


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def hostile_workspace(sandbox: tuple[Path, Path]) -> tuple[Path, Path]:
    workspace, outside = sandbox
    (workspace / "link_out").symlink_to(outside)
    (workspace / "link_secret").symlink_to(outside / "secret.txt")
    (workspace / "chain2").symlink_to(outside)
    (workspace / "chain1").symlink_to(workspace / "chain2")
    (workspace / "dangling").symlink_to(outside / "new-file.txt")
    (workspace / "src" / "up").symlink_to(workspace.parent)
    return workspace, outside


@pytest.mark.parametrize("template", LEXICAL + DISK_ONLY, ids=repr)
async def test_no_escape_on_disk(
    run_calls, hostile_workspace: tuple[Path, Path], template: str
) -> None:
    workspace, outside = hostile_workspace
    before = _snapshot(outside)
    path = template.format(workspace=workspace, outside=outside)
    calls = [{"name": name, "args": make(path)} for name, make in TOOLS.items()]
    result = await run_calls(LocalShellBackend(workspace), calls)
    for i, name in enumerate(TOOLS):
        message = result["results"][f"call_{i}"]
        assert message.status == "error", (name, message.content)
        assert SECRET not in message.content, name
    assert _snapshot(outside) == before
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert not (workspace.parent / "workspace_evil").exists()


@pytest.mark.parametrize("path", LEXICAL, ids=repr)
async def test_no_escape_in_state(run_calls, path: str) -> None:
    files = {"secret.txt": {"content": SECRET, "modified_at": "x"}}
    calls = [{"name": name, "args": make(path)} for name, make in TOOLS.items()]
    result = await run_calls(StateBackend(), calls, files=files)
    for i, name in enumerate(TOOLS):
        message = result["results"][f"call_{i}"]
        assert message.status == "error", (name, message.content)
    assert result["files"] == files
