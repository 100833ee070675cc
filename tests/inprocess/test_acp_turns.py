"""Full turns over stdio: streaming, tool cards with whole-file diffs, approvals."""

from __future__ import annotations

from acp import schema as S

from tests.support.turns import call, calls, edit, write

EDIT_AND_RUN = [
    edit("edit1", "a.py", "x = 1", "x = 2", said="Changing x and running it.")
    | {"reasoning": "I should fix the constant."},
    calls(call("run1", "execute", command="python3 a.py")),
    {"content": "All done."},
]


async def test_full_turn_with_approvals(agent_factory, model_requests) -> None:
    async with agent_factory(EDIT_AND_RUN) as agent:
        (agent.workspace / "a.py").write_text("import sys\nx = 1\nprint(x)\n")
        session = await agent.new_session()
        agent.client.answers = ["allow_once", "allow_once"]
        response = await agent.prompt(session, "bump x")
        assert response.stop_reason == "end_turn"
        assert (agent.workspace / "a.py").read_text() == "import sys\nx = 2\nprint(x)\n"

        client = agent.client
        assert "Changing x and running it." in client.text() and client.text().endswith("All done.")
        thoughts = "".join(u.content.text for u in client.of(S.AgentThoughtChunk))
        assert thoughts == "I should fix the constant."
        assert len(client.of(S.AgentMessageChunk)) > 2  # streamed, not one blob

        cards = client.cards()
        edit, run = cards["edit1"], cards["run1"]
        assert edit["starts"] == 1 and edit["kind"] == "edit" and edit["title"] == "Edit a.py"
        assert edit["statuses"] == ["pending", "in_progress", "completed"]
        diff = next(c for c in edit["content"] if isinstance(c, S.FileEditToolCallContent))
        assert diff.path == str(agent.workspace / "a.py")
        assert diff.old_text == "import sys\nx = 1\nprint(x)\n"
        assert diff.new_text == "import sys\nx = 2\nprint(x)\n"
        assert edit["locations"][0].path == str(agent.workspace / "a.py")
        assert edit["locations"][0].line == 2
        assert run["kind"] == "execute" and run["title"] == "python3 a.py"
        assert run["raw_input"] == {"command": "python3 a.py"}
        assert run["statuses"][0] == "pending" and run["statuses"][-1] == "completed"
        output = run["content"][-1].content.text
        assert "2\n[exit code 0]" in output

        # Permission requests name the same tool call ids as the cards, with four options.
        asked = [r.tool_call.tool_call_id for r in client.permission_requests]
        assert asked == ["edit1", "run1"]
        kinds = [o.kind for o in client.permission_requests[0].options]
        assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
        assert len(model_requests()) == 3


async def test_reject_marks_the_card_failed_and_tells_the_model(
    agent_factory, model_requests
) -> None:
    turns = [write("w1", "new.txt", "hi"), {"content": "Understood, not writing it."}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        agent.client.answers = ["reject_once"]
        response = await agent.prompt(session, "write a file")
        assert response.stop_reason == "end_turn"
        assert not (agent.workspace / "new.txt").exists()
        card = agent.client.cards()["w1"]
        assert card["statuses"] == ["pending", "failed"]
        seen = model_requests()[1]["messages"]
        rejection = next(m for m in seen if m.get("tool_call_id") == "w1")
        assert "rejected" in rejection["content"]


async def test_always_rules_apply_to_exactly_what_they_name(agent_factory) -> None:
    def run(i: int, cmd: str) -> dict:
        return {"tool_calls": [{"id": f"x{i}", "name": "execute", "args": {"command": cmd}}]}

    turns = [
        run(1, "echo one"),
        {"content": "ok"},
        run(2, "echo one"),  # same command: allowed without asking
        {"content": "ok"},
        run(3, "echo two"),  # another command: asks again
        {"content": "ok"},
        {
            "tool_calls": [
                {
                    "id": "e1",
                    "name": "edit_file",
                    "args": {"file_path": "f.txt", "old_string": "a", "new_string": "b"},
                }
            ]
        },
        {"content": "ok"},
        {
            "tool_calls": [
                {
                    "id": "e2",
                    "name": "edit_file",
                    "args": {"file_path": "f.txt", "old_string": "b", "new_string": "c"},
                }
            ]
        },
        {"content": "ok"},
        {"tool_calls": [{"id": "d1", "name": "delete", "args": {"file_path": "f.txt"}}]},
        {"content": "ok"},
        {"tool_calls": [{"id": "d2", "name": "delete", "args": {"file_path": "f.txt"}}]},
        {"content": "ok"},
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "f.txt").write_text("a\n")
        session = await agent.new_session()
        agent.client.answers = ["allow_always", "reject_once", "allow_always", "reject_always"]
        for _ in range(7):
            await agent.prompt(session, "go")
        asked = [r.tool_call.tool_call_id for r in agent.client.permission_requests]
        # x2 and e2 were covered by "always allow"; d2 by "always reject".
        assert asked == ["x1", "x3", "e1", "d1"]
        cards = agent.client.cards()
        assert cards["x2"]["statuses"][-1] == "completed"
        assert cards["x3"]["statuses"][-1] == "failed"
        assert cards["e2"]["statuses"][-1] == "completed"
        assert cards["d1"]["statuses"][-1] == "failed" and cards["d2"]["statuses"][-1] == "failed"
        assert (agent.workspace / "f.txt").read_text() == "c\n"


async def test_every_card_ends_completed_or_failed(agent_factory) -> None:
    turns = [
        {
            "tool_calls": [
                {"id": "r1", "name": "read_file", "args": {"file_path": "missing.py"}},
                {"id": "g1", "name": "grep", "args": {"pattern": "x"}},
                {"id": "l1", "name": "ls", "args": {"path": ""}},
            ]
        },
        {"content": "done"},
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "x.py").write_text("x = 1\n")
        session = await agent.new_session()
        await agent.prompt(session, "look around")
        cards = agent.client.cards()
        assert cards["r1"]["statuses"][-1] == "failed" and cards["r1"]["kind"] == "read"
        assert cards["g1"]["statuses"][-1] == "completed" and cards["g1"]["kind"] == "search"
        assert cards["l1"]["statuses"][-1] == "completed"
        assert all(c["starts"] == 1 for c in cards.values())
        assert agent.client.permission_requests == []  # reads are never gated
