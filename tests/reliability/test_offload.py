"""Model-controlled identifiers: a tool call's id must never name a file.

A result too large to show is saved under `/large_tool_results/`; its name used to be the
tool call's id, which an OpenAI-compatible endpoint passes through from the model. Ids that
climb (`../<workspace>/test.sh`, `../user/AGENTS.md`) must land nowhere but that folder, in
plan mode with no question asked, through a bogus tool's error, a read-only MCP tool's
answer, the LSP face and the Python API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from deepacp import create_deep_agent
from deepacp.backends import FilesystemBackend
from deepacp.harness.names import LARGE_RESULTS_DIR
from deepacp.testing import ScriptedChatModel
from tests.support.lsp import modelless_lsp, scripted_edit
from tests.support.reliability import notes_server, size

SCRIPT = "#!/bin/sh\necho original\n"
MEMORY = "Be brief.\n"
BIG = 90_000  # characters: over the offload threshold (20k tokens)


def hostile_ids(workspace: Path, count: int, first: int = 0) -> list[str]:
    """Ids that climb out of the offload folder towards the workspace and the user memory
    (`count` of them, from form number `first` on; numbered once the forms run out)."""
    inside = str(workspace).lstrip("/")
    forms = [
        f"../{inside}/test.sh",
        "../user/AGENTS.md",
        f"../../{inside}/test.sh",
        "..//user/AGENTS.md",
        f"x/../../{inside}/test.sh",
        "../user/skills/evil/SKILL.md",
        "/../user/AGENTS.md",
        "..",
    ]
    numbers = range(first, first + count)
    return [forms[i % len(forms)] + ("" if i < len(forms) else f"#{i}") for i in numbers]


def plant(workspace: Path, home: Path) -> None:
    script = workspace / "test.sh"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    home.mkdir(parents=True, exist_ok=True)
    (home / "AGENTS.md").write_text(MEMORY)


def untouched(workspace: Path, home: Path) -> list[str]:
    problems = []
    if (workspace / "test.sh").read_text() != SCRIPT:
        problems.append("test.sh was overwritten")
    if (home / "AGENTS.md").read_text() != MEMORY:
        problems.append("the user's AGENTS.md was overwritten")
    if (home / "skills").exists():
        problems.append("a skill was planted")
    extra = sorted(p.name for p in workspace.iterdir()) != ["test.sh"]
    if extra:
        problems.append(f"the workspace holds {sorted(p.name for p in workspace.iterdir())}")
    return problems


def saved_at(content: str) -> str:
    """Where an offloaded result's preview says the whole result is."""
    return content.split("saved in full at ", 1)[-1].split(".\n", 1)[0]


def offload_paths(requests: list[dict]) -> list[str]:
    """The saved-at paths the model was shown in tool results."""
    found = []
    for request in requests:
        for message in request["messages"]:
            content = message.get("content")
            if message["type"] == "tool" and "saved in full" in str(content):
                found.append(saved_at(content))
    return found


async def test_tool_call_ids_cannot_steer_an_offload_over_acp(
    agent_factory, model_requests, tally, tmp_path: Path
) -> None:
    t = tally("model-controlled ids: offload over ACP")
    count = size(4, 40)  # each call's name or answer is 90k characters: a few fill a window
    bogus = "no_such_tool_" + "x" * BIG
    ids = hostile_ids(tmp_path / "workspace", count)  # the workspace agent_factory uses
    calls = [{"id": i, "name": bogus, "args": {}} for i in ids[: count // 2]]
    calls += [
        {"id": i, "name": "notes_env_value", "args": {"name": "BIG"}} for i in ids[count // 2 :]
    ]
    turns = [{"tool_calls": calls}, {"content": "done"}]
    async with agent_factory(turns) as agent:
        plant(agent.workspace, agent.home)
        mcp = notes_server(BIG="y" * BIG)
        new = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[mcp])
        await agent.conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        response = await agent.prompt(new.session_id, "look")
        t.record(response.stop_reason == "end_turn", f"stop: {response.stop_reason}")
        t.record(not agent.client.permission_requests, "a question was asked")
        for problem in untouched(agent.workspace, agent.home):
            t.record(False, problem)
        saved = offload_paths(model_requests())
        t.record(len(saved) == len(calls), f"{len(saved)} of {len(calls)} results offloaded")
        for path in saved:
            name = path.removeprefix(LARGE_RESULTS_DIR)
            ok = path.startswith(LARGE_RESULTS_DIR) and name.isalnum() and ".." not in path
            t.record(ok, f"offloaded to {path[:120]!r}")
        stored = list((agent.home / "scratch").glob("*/large_tool_results/*"))
        t.record(len(stored) == len(calls), f"{len(stored)} files in the offload folders")
    t.check()


async def test_tool_call_ids_cannot_steer_an_offload_in_the_python_api(
    tally, tmp_path: Path
) -> None:
    t = tally("model-controlled ids: offload in the Python API")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    plant(workspace, home)
    ids = hostile_ids(workspace, size(4, 40), first=4)  # other forms than over ACP
    bogus = "no_such_tool_" + "x" * BIG
    # each call its own (the same call again and again is a loop, answered unrun)
    calls = [{"id": i, "name": bogus, "args": {"n": n}} for n, i in enumerate(ids)]
    model = ScriptedChatModel(turns=[{"tool_calls": calls}, {"content": "done"}])
    agent = create_deep_agent(model, backend=FilesystemBackend(workspace))
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})
    for problem in untouched(workspace, home):
        t.record(False, problem)
    shown = [m.content for m in result["messages"] if m.type == "tool"]
    for content in shown:
        path = saved_at(content)
        ok = path.startswith(LARGE_RESULTS_DIR) and ".." not in path
        t.record(ok, f"saved at {path[:120]!r}")
    kept = [p for p in result.get("files", {}) if p.startswith(LARGE_RESULTS_DIR)]
    t.record(len(kept) == len(ids), f"{len(kept)} of {len(ids)} results kept in the state")
    t.check()


LSP_HOME, lsp = modelless_lsp("deepacp-offload-lsp-")


@pytest.mark.e2e
async def test_tool_call_ids_cannot_steer_an_offload_over_lsp(
    lsp: LanguageClient, tally, tmp_path: Path
) -> None:
    """The LSP face proposes workspace writes, but the user memory route is on disk."""
    t = tally("model-controlled ids: offload over LSP")
    workspace, home = tmp_path / "ws", Path(LSP_HOME)
    workspace.mkdir()
    plant(workspace, home)
    (workspace / "app.py").write_text("x = 1\n")
    ids = hostile_ids(workspace, size(4, 20), first=2)
    bogus = "no_such_tool_" + "x" * BIG
    script = tmp_path / "script.json"
    turns = [{"tool_calls": [{"id": i, "name": bogus, "args": {}} for i in ids]}, {"content": "ok"}]
    script.write_text(json.dumps({"turns": turns}))
    result = await scripted_edit(lsp, workspace, script, (workspace / "app.py").as_uri())
    t.record(result["proposal"] is None, f"a proposal was made: {result['files']}")
    (workspace / "app.py").unlink()
    for problem in untouched(workspace, home):
        t.record(False, problem)
    t.check()
