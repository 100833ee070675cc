"""Permission rules against links inside the workspace (Python API, docs/python-api.md's rules).

`config -> secrets` and `db -> migrations` live in the repository itself, so root
confinement lets them through; the rules must still see where they lead: `deny
/secrets/**` holds for `config/key.txt` on every operation (read, write, edit, delete, ls,
glob, grep), and `interrupt /migrations/*` asks for `db/002.sql`.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deepacp import CommandRule, PermissionRule, create_deep_agent
from deepacp.backends import FilesystemBackend
from deepacp.testing import ScriptedChatModel

SECRET = "SECRET-KEY-CONTENT"
RULES = [
    PermissionRule(("read", "write"), ("/secrets/**",), "deny"),
    PermissionRule(("write",), ("/migrations/*",), "interrupt"),
    CommandRule(("git status", "git diff *"), "allow"),
]


def linked_repo(root: Path) -> Path:
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text(SECRET + "\n")
    (root / "migrations").mkdir()
    (root / "migrations" / "001.sql").write_text("create table a;\n")
    (root / "config").symlink_to("secrets")
    (root / "db").symlink_to("migrations")
    (root / "nested").mkdir()
    (root / "nested" / "k").symlink_to("../secrets/key.txt")
    return root


CALLS = [
    ("read_file", {"file_path": "config/key.txt"}),
    ("read_file", {"file_path": "nested/k"}),
    ("read_file", {"file_path": "./config/../config/key.txt"}),
    ("grep", {"pattern": "SECRET", "path": "config"}),
    ("grep", {"pattern": "SECRET", "path": "nested/k"}),
    ("ls", {"path": "config"}),
    ("glob", {"pattern": "*", "path": "config"}),
    ("write_file", {"file_path": "config/key.txt", "content": "pwned\n"}),
    ("edit_file", {"file_path": "nested/k", "old_string": SECRET, "new_string": "pwned"}),
    ("write_file", {"file_path": "config/new.txt", "content": "planted\n"}),
    ("delete", {"file_path": "config/key.txt"}),
]


async def test_rules_follow_links_inside_the_workspace(tally, tmp_path: Path) -> None:
    t = tally("permission rules: links inside the workspace")
    root = linked_repo(tmp_path / "repo")
    calls = [{"id": f"c{i}", "name": n, "args": a} for i, (n, a) in enumerate(CALLS)]
    model = ScriptedChatModel(turns=[{"tool_calls": calls}, {"content": "done"}])
    agent = create_deep_agent(model, backend=FilesystemBackend(root), permissions=RULES)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})
    results = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    for call in calls:
        message = results[call["id"]]
        refused = message.status == "error" and SECRET not in str(message.content)
        t.record(refused, f"{call['name']} {call['args']}: {str(message.content)[:120]}")
    t.record((root / "secrets" / "key.txt").read_text() == SECRET + "\n", "the secret changed")
    t.record(not (root / "secrets" / "new.txt").exists(), "a file was planted in secrets")

    # A whole-tree search and listing do not show the secret through the link either.
    sweep = [
        {"id": "g", "name": "grep", "args": {"pattern": "SECRET"}},
        {"id": "l", "name": "glob", "args": {"pattern": "**/*"}},
    ]
    model = ScriptedChatModel(turns=[{"tool_calls": sweep}, {"content": "done"}])
    agent = create_deep_agent(model, backend=FilesystemBackend(root), permissions=RULES)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})
    for message in result["messages"]:
        if isinstance(message, ToolMessage):
            shown = str(message.content)
            ok = SECRET not in shown and "key.txt" not in shown and "nested/k" not in shown
            t.record(ok, f"{message.tool_call_id}: {shown[:200]}")
    t.check()


async def test_interrupt_rules_follow_links(tally, tmp_path: Path) -> None:
    t = tally("permission rules: links inside the workspace")
    root = linked_repo(tmp_path / "repo")
    write = {"file_path": "db/002.sql", "content": "drop table a;\n"}
    model = ScriptedChatModel(
        turns=[{"tool_calls": [{"id": "m", "name": "write_file", "args": write}]}]
    )
    agent = create_deep_agent(
        model, backend=FilesystemBackend(root), permissions=RULES, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]}, config)
    t.record(bool(result.get("__interrupt__")), "the migration was not asked about")
    t.record(not (root / "migrations" / "002.sql").exists(), "the migration was written")
    t.check()
