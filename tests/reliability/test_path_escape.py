"""The path-escape corpus (tests/reliability/corpus.py) against every file tool, on every
backend, and through both faces: nothing outside the workspace is read or written, and each
attempt is a clear tool error."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from pytest_lsp import LanguageClient

from deepacp.backends import (
    EditorBackend,
    FilesystemBackend,
    LocalShellBackend,
    PermissionBackend,
    StateBackend,
)
from deepacp.backends.overlay import OverlayBackend
from deepacp.session.workspace import session_backend
from tests.reliability.corpus import (
    SECRET,
    corpus,
    hostile_tree,
    is_workspace_link,
    lexical_corpus,
    snapshot,
)
from tests.support.lsp import modelless_lsp, scripted_edit
from tests.support.reliability import size

TOOLS = {
    "read_file": lambda p: {"file_path": p},
    "write_file": lambda p: {"file_path": p, "content": "pwned"},
    "edit_file": lambda p: {"file_path": p, "old_string": SECRET, "new_string": "pwned"},
    "ls": lambda p: {"path": p},
    "glob": lambda p: {"pattern": "*", "path": p},
    "grep": lambda p: {"pattern": "SECRET", "path": p},
    "delete": lambda p: {"file_path": p},  # last: deleting a link inside the workspace is allowed
}


def refused(name: str, path: str, status: str, content: str) -> bool:
    """Every call is an error — except deleting a symlink that lives in the workspace, which
    removes the link (like `rm`), never its target (the snapshot of the outside shows that)."""
    if SECRET in content:
        return False
    if name == "delete" and status != "error":
        return is_workspace_link(path) and content.startswith("Deleted")
    return status == "error"


def test_the_corpus_is_large_enough() -> None:
    assert len(corpus()) >= 200


def script(paths: list[str]) -> list[dict]:
    """One model turn per tool, each calling it on every path at once; then a last answer."""
    turns = []
    for name, make in TOOLS.items():
        calls = [{"id": f"{name}-{i}", "name": name, "args": make(p)} for i, p in enumerate(paths)]
        turns.append({"tool_calls": calls})
    return [*turns, {"content": "done"}]


class RecordingEditor:
    """An editor that does whatever it is asked, like a real one: any escape would show."""

    can_read = can_write = True
    can_run = False

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def read_text_file(self, path: str) -> str:
        self.paths.append(path)
        return Path(path).read_text()

    async def write_text_file(self, path: str, content: str) -> None:
        self.paths.append(path)
        Path(path).write_text(content)


def make_backend(kind: str, workspace: Path, home: Path, editor: RecordingEditor) -> Any:
    if kind == "disk":
        return LocalShellBackend(workspace)
    if kind == "session":  # what an ACP session uses: routes for /user/, scratch, skills
        return session_backend(str(workspace), home / "scratch", home)
    if kind == "editor":
        return EditorBackend(LocalShellBackend(workspace), editor)
    if kind == "overlay":
        return OverlayBackend(FilesystemBackend(workspace))
    if kind == "permissions":
        return PermissionBackend(FilesystemBackend(workspace), [])
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["disk", "session", "editor", "overlay", "permissions"])
async def test_no_escape_through_any_backend(tally, tmp_path: Path, kind: str) -> None:
    from deepacp import create_deep_agent
    from deepacp.testing import ScriptedChatModel

    workspace, outside, home = hostile_tree(tmp_path)
    before = snapshot(tmp_path, workspace)
    paths = [p.format(workspace=workspace, outside=outside, home=home) for p in corpus()]
    editor = RecordingEditor()
    backend = make_backend(kind, workspace, home, editor)
    agent = create_deep_agent(ScriptedChatModel(turns=script(paths)), backend=backend)
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})
    results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}

    t = tally(f"path escape: {kind} backend")
    for name in TOOLS:
        for i, path in enumerate(paths):
            message = results[f"{name}-{i}"]
            ok = refused(name, path, message.status, message.content)
            t.record(ok, f"{name}({path[:80]!r}): {message.content[:120]!r}")
    t.record(snapshot(tmp_path, workspace) == before, "files outside the workspace unchanged")
    t.record(sorted(os.listdir(outside)) == ["secret.txt"], "nothing created outside")
    t.record(not (tmp_path / "workspace_evil").exists(), "no sibling workspace created")
    resolved = workspace.resolve()
    escaped = [p for p in editor.paths if not Path(p).resolve().is_relative_to(resolved)]
    t.record(not escaped, f"the editor was asked for outside paths: {escaped[:5]}")
    if kind == "overlay":
        changed = [str(backend.disk_path(p)) for p in backend.changes()]
        t.record(all(Path(p).is_relative_to(workspace) for p in changed), f"overlay: {changed}")
    t.check()


async def test_no_escape_in_state(tally) -> None:
    from deepacp import create_deep_agent
    from deepacp.testing import ScriptedChatModel

    paths = lexical_corpus()
    files = {"secret.txt": {"content": SECRET, "modified_at": "x"}}
    agent = create_deep_agent(ScriptedChatModel(turns=script(paths)), backend=StateBackend())
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}], "files": files})
    t = tally("path escape: state backend")
    for message in state["messages"]:
        if isinstance(message, ToolMessage):
            t.record(message.status == "error", f"{message.tool_call_id}: {message.content[:120]}")
    t.record(state["files"] == files, "state files unchanged")
    t.check()


def sample(paths: list[str], count: int) -> list[str]:
    return paths if count >= len(paths) else random.Random(8).sample(paths, count)


async def test_no_escape_through_the_acp_face(
    agent_factory, editor_client, capabilities, tally, tmp_path: Path
) -> None:
    """The editor offers its file system: an escape would reach it as an fs/ request."""
    workspace, outside, home = hostile_tree(tmp_path / "tree")
    before = snapshot(tmp_path / "tree", workspace)
    chosen = sample(corpus(), size(60, 400))
    paths = [p.format(workspace=workspace, outside=outside, home=home) for p in chosen]
    async with agent_factory(
        script(paths), workspace=workspace, client=editor_client, capabilities=capabilities()
    ) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        response = await agent.prompt(session, "go")
        cards = agent.client.cards(session)
    t = tally("path escape: ACP face")
    t.record(response.stop_reason == "end_turn", "the turn ended normally")
    for name in TOOLS:
        for i, path in enumerate(paths):
            card = cards.get(f"{name}-{i}", {"statuses": []})
            status = "error" if card["statuses"][-1:] == ["failed"] else "success"
            ok = status == "error" or (name == "delete" and is_workspace_link(path))
            t.record(ok, f"{name}({path[:80]!r}): {card['statuses']}")
    asked = editor_client.reads + [p for p, _ in editor_client.writes]
    escaped = [p for p in asked if not Path(p).resolve().is_relative_to(workspace.resolve())]
    t.record(not escaped, f"fs requests outside the workspace: {escaped[:5]}")
    t.record(snapshot(tmp_path / "tree", workspace) == before, "files outside unchanged")
    t.check()


LSP_HOME, lsp = modelless_lsp("deepacp-escape-home-")


@pytest.mark.e2e
async def test_no_escape_through_the_lsp_face(lsp: LanguageClient, tally, tmp_path: Path) -> None:
    """A proposal may only ever name files inside the workspace, and nothing is written."""
    workspace, outside, home = hostile_tree(tmp_path / "tree")
    before = snapshot(tmp_path / "tree", workspace)
    chosen = sample(corpus(), size(40, 400))
    paths = [p.format(workspace=workspace, outside=outside, home=home) for p in chosen]
    record = tmp_path / "requests.jsonl"
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps({"turns": script(paths), "record": str(record)}))
    uri = (workspace / "src" / "app.py").as_uri()
    result = await scripted_edit(lsp, workspace, script_file, uri)
    t = tally("path escape: LSP face")
    t.record(result["proposal"] is None and result["files"] == [], f"proposal: {result}")
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    tool_results = [m for m in seen[-1]["messages"] if m["type"] == "tool"]
    t.record(len(tool_results) == len(TOOLS) * len(paths), f"{len(tool_results)} tool results")
    for message in tool_results:
        name, index = message["tool_call_id"].rsplit("-", 1)
        ok = refused(name, paths[int(index)], message["status"], message["content"])
        t.record(ok, f"{message['tool_call_id']}: {message['content'][:100]}")
    t.record(snapshot(tmp_path / "tree", workspace) == before, "files outside unchanged")
    t.check()
