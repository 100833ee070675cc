"""A corpus of hostile paths against every file tool: nothing outside the root is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepacp.backends import LocalShellBackend, StateBackend

SECRET = "TOP-SECRET-CONTENT"

# Paths that must be refused on any backend (they are malformed or climb out lexically).
LEXICAL = [
    "..",
    "../",
    "../outside/secret.txt",
    "../../etc/passwd",
    "src/../../outside/secret.txt",
    "./../outside/secret.txt",
    "src/../../../",
    "a/b/../../../outside",
    "src/./../../outside/secret.txt",
    "../" * 40 + "etc/passwd",
    "src/app.py\x00.txt",
    "\x00",
    "../outside\x00/secret.txt",
    "\uff0e\uff0e/outside/secret.txt",
    "\u2024\u2024/outside/secret.txt",
    "\u2025/outside/secret.txt",
    "..\u2215outside\u2215secret.txt",
    "..\u2044outside",
    "..\uff0foutside\uff0fsecret.txt",
    "src/\u200b../../outside",
    "\u202e../outside/secret.txt",
    "..\\outside\\secret.txt",
    "src\\..\\..\\outside",
    "C:\\Windows\\system32\\drivers\\etc\\hosts",
    "\\\\server\\share\\secret.txt",
    "~/.ssh/id_rsa",
    "~root/.bashrc",
    "src/\napp.py",
    "src/app.py\r",
    "src/\tapp.py",
    "x" * 5000,
    "a/" * 3000,
    "../workspace/../outside/secret.txt",
    "..%2f..%2f" + "\x00",
]

# Paths that are only hostile on disk: absolute paths elsewhere and symlinks out.
DISK_ONLY = [
    "{outside}/secret.txt",
    "{outside}",
    "/etc/passwd",
    "/",
    "/tmp",
    "//etc/passwd",
    "///etc//passwd",
    "{workspace}/../outside/secret.txt",
    "{workspace}_evil/secret.txt",
    "{workspace}/src/../../outside/secret.txt",
    "link_out/secret.txt",
    "link_out",
    "link_out/",
    "link_secret",
    "chain1/secret.txt",
    "chain1",
    "dangling",
    "src/up/outside/secret.txt",
    "src/up",
]

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
