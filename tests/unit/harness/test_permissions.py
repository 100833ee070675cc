"""Permission rules in the backend layer: every tool, sub-agents, direct calls, the shell."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deepacp import create_deep_agent
from deepacp.backends import (
    CommandRule,
    LocalShellBackend,
    PermissionBackend,
    PermissionDenied,
    PermissionRule,
)
from deepacp.testing import ScriptedChatModel
from tests.support.turns import call, calls, task


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    for rel, text in {
        "secrets/key.txt": "SECRET",
        "secrets/public.txt": "public",
        "src/app.py": "app = 1\n",
        "config/settings.toml": "debug = false\n",
        "config/deep/inner.toml": "x = 1\n",
        "notes.md": "notes SECRET-free\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


RULES = [
    PermissionRule(("read",), ("/secrets/public.txt",), "allow"),
    PermissionRule(("read", "write"), ("/secrets/**",), "deny"),
    PermissionRule(("write",), ("/src/**",), "deny"),
    PermissionRule(("write",), ("/config/*",), "interrupt"),
]


def results(state: dict) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


async def run(workspace: Path, calls: list[dict], rules=RULES, **kwargs) -> dict:
    for i, made in enumerate(calls):
        made.setdefault("id", f"c{i}")
    model = ScriptedChatModel(turns=[{"tool_calls": calls}, {"content": "done"}])
    agent = create_deep_agent(
        model, backend=LocalShellBackend(workspace), permissions=rules, **kwargs
    )
    return results(await agent.ainvoke({"messages": [HumanMessage("go")]}))


async def test_deny_rules_cover_every_tool(workspace: Path) -> None:
    out = await run(
        workspace,
        [
            {"name": "read_file", "args": {"file_path": "secrets/key.txt"}},
            {"name": "ls", "args": {"path": "secrets"}},
            {"name": "write_file", "args": {"file_path": "secrets/new.txt", "content": "x"}},
            {
                "name": "edit_file",
                "args": {"file_path": "src/app.py", "old_string": "1", "new_string": "2"},
            },
            {"name": "delete", "args": {"file_path": "src/gone.py"}},
            {"name": "grep", "args": {"pattern": "SECRET"}},
            {"name": "glob", "args": {"pattern": "**/*.txt"}},
            {"name": "ls", "args": {"path": ""}},
            {"name": "read_file", "args": {"file_path": "secrets/public.txt"}},
            {"name": "read_file", "args": {"file_path": "src/app.py"}},
        ],
    )
    for call_id in ("c0", "c1", "c2", "c3", "c4"):
        assert out[call_id].status == "error" and "not permitted" in out[call_id].content
    assert "secrets/key.txt" not in out["c5"].content and "notes.md" in out["c5"].content
    assert out["c6"].content.splitlines() == ["secrets/public.txt"]  # denied files are hidden
    assert "secrets/" not in out["c7"].content.splitlines()  # reading /secrets itself is denied
    assert out["c8"].content.endswith("public")  # first match wins: the allow rule
    assert out["c9"].status == "success"
    assert (workspace / "src/app.py").read_text() == "app = 1\n"
    assert not (workspace / "secrets/new.txt").exists()


async def test_interrupt_rules_ask_with_the_path_and_segment_globs(workspace: Path) -> None:
    calls = [
        {
            "id": "top",
            "name": "write_file",
            "args": {"file_path": "config/settings.toml", "content": "debug = true\n"},
        },
        {
            "id": "deep",
            "name": "write_file",
            "args": {"file_path": "config/deep/inner.toml", "content": "x = 2\n"},
        },
    ]
    model = ScriptedChatModel(turns=[{"tool_calls": calls}, {"content": "done"}])
    agent = create_deep_agent(
        model, backend=LocalShellBackend(workspace), permissions=RULES, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    result = await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
    [interrupt] = result["__interrupt__"]
    assert interrupt.value["tool_call_id"] == "top"  # /config/* covers direct children only
    assert "config/settings.toml" in interrupt.value["description"]
    assert (workspace / "config/deep/inner.toml").read_text() == "x = 2\n"
    assert (workspace / "config/settings.toml").read_text() == "debug = false\n"
    await agent.ainvoke(Command(resume={interrupt.id: {"type": "approve"}}), config)
    assert (workspace / "config/settings.toml").read_text() == "debug = true\n"


async def test_a_subagent_obeys_the_same_rules(workspace: Path) -> None:
    model = ScriptedChatModel(
        turns=[
            task("t", "read the key"),
            calls(call("r", "read_file", file_path="secrets/key.txt")),
            {"content": "I could not read it."},
            {"content": "done"},
        ]
    )
    agent = create_deep_agent(model, backend=LocalShellBackend(workspace), permissions=RULES)
    result = await agent.ainvoke({"messages": [HumanMessage("go")]})
    assert "SECRET" not in str(result["messages"])
    assert results(result)["t"].content == "I could not read it."


async def test_direct_backend_calls_obey_the_rules(workspace: Path) -> None:
    backend = PermissionBackend(LocalShellBackend(workspace), RULES)
    with pytest.raises(PermissionDenied):
        await backend.read_text("secrets/key.txt")
    with pytest.raises(PermissionDenied):
        await backend.write_text("config/settings.toml", "x")  # interrupt: nobody to ask here
    assert await backend.read_text("secrets/public.txt") == "public"


async def test_shell_policy(workspace: Path) -> None:
    rules = [
        *RULES,
        CommandRule(("echo ok", "ls *"), "allow"),
        CommandRule(("rm *",), "deny"),
    ]
    model = ScriptedChatModel(
        turns=[
            {
                "tool_calls": [
                    {"id": "allowed", "name": "execute", "args": {"command": "echo ok"}},
                    {"id": "prefix", "name": "execute", "args": {"command": "ls  secrets"}},
                    {"id": "denied", "name": "execute", "args": {"command": "rm -rf src"}},
                    {"id": "other", "name": "execute", "args": {"command": "cat secrets/key.txt"}},
                ]
            },
            {"content": "done"},
        ]
    )
    agent = create_deep_agent(
        model, backend=LocalShellBackend(workspace), permissions=rules, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    result = await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
    # Only the command no rule covers waits for approval: path rules exist, so the shell
    # is never a silent way around them.
    assert [i.value["tool_call_id"] for i in result["__interrupt__"]] == ["other"]
    done = results(result)
    assert done["allowed"].content == "ok\n[exit code 0]"
    assert done["prefix"].status == "success"
    assert done["denied"].status == "error" and "does not permit" in done["denied"].content
    assert (workspace / "src/app.py").exists()
    final = await agent.ainvoke(
        Command(resume={result["__interrupt__"][0].id: {"type": "reject"}}), config
    )
    assert "SECRET" not in results(final)["other"].content


async def test_without_path_rules_commands_are_not_gated(workspace: Path) -> None:
    out = await run(
        workspace,
        [
            {"name": "execute", "args": {"command": "echo hi"}},
            {"name": "execute", "args": {"command": "rm x"}},
        ],
        rules=[CommandRule(("rm *",), "deny")],
    )
    assert out["c0"].status == "success" and out["c1"].status == "error"


@pytest.mark.parametrize(
    "make",
    [
        lambda: PermissionRule(("execute",), ("/x",)),
        lambda: PermissionRule(("read",), ("relative/*",)),
        lambda: PermissionRule(("read",), ()),
        lambda: PermissionRule(("read",), ("/x",), "maybe"),
        lambda: CommandRule((), "allow"),
        lambda: CommandRule(("ls",), "sometimes"),
    ],
)
def test_rules_are_validated_at_construction(make) -> None:
    with pytest.raises(ValueError):
        make()
