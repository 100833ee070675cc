"""Approving with the change in view: pending cards and permission requests carry the
proposed diff and the kind; an error in place of an answer is a rejection; card text is
written for people."""

from __future__ import annotations

from pathlib import Path

from acp import RequestError
from acp import schema as S


def call(call_id: str, name: str, **args) -> dict:
    return {"id": call_id, "name": name, "args": args}


def diffs(content) -> list[tuple[str, str | None, str]]:
    return [
        (c.path, c.old_text, c.new_text)
        for c in content or []
        if isinstance(c, S.FileEditToolCallContent)
    ]


def texts(content) -> list[str]:
    return [c.content.text for c in content or [] if isinstance(c, S.ContentToolCallContent)]


def pending(client, call_id: str) -> S.ToolCallStart:
    [start] = [u for u in client.of(S.ToolCallStart) if u.tool_call_id == call_id]
    return start


CHANGES = [
    {
        "tool_calls": [
            call("e", "edit_file", file_path="a.py", old_string="x = 1", new_string="x = 2"),
            call("w", "write_file", file_path="new.txt", content="hello\n"),
            call("d", "delete", file_path="old.txt"),
            call("x", "execute", command="echo checked"),
        ]
    },
    {"content": "done"},
]


async def test_the_pending_card_and_the_permission_request_carry_the_diff_and_kind(
    agent_factory,
) -> None:
    async with agent_factory(CHANGES) as agent:
        a, new, old = (agent.workspace / n for n in ("a.py", "new.txt", "old.txt"))
        a.write_text("import sys\nx = 1\nprint(x)\n")
        old.write_text("bye\n")
        expected = {
            "e": [(str(a), "import sys\nx = 1\nprint(x)\n", "import sys\nx = 2\nprint(x)\n")],
            "w": [(str(new), None, "hello\n")],
            "d": [(str(old), "bye\n", "")],
            "x": [],
        }
        seen_at_approval: dict[str, tuple] = {}

        async def at_approval(request: S.RequestPermissionRequest) -> None:
            # What the user has in view when asked: the card so far, and the files untouched.
            call_id = request.tool_call.tool_call_id
            files = (a.read_text(), new.exists(), old.exists())
            seen_at_approval[call_id] = (diffs(pending(agent.client, call_id).content), files)

        agent.client.on_permission = at_approval
        session = await agent.new_session()
        assert (await agent.prompt(session, "change things")).stop_reason == "end_turn"

        untouched = ("import sys\nx = 1\nprint(x)\n", False, True)
        assert seen_at_approval == {
            "e": (expected["e"], untouched),
            "w": (expected["w"], untouched),
            "d": (expected["d"], untouched),
            "x": ([], untouched),
        }
        kinds = {u.tool_call_id: u.kind for u in agent.client.of(S.ToolCallStart)}
        assert kinds == {"e": "edit", "w": "edit", "d": "delete", "x": "execute"}
        assert pending(agent.client, "e").locations[0].line == 2  # the first changed line
        for request in agent.client.permission_requests:
            call_id = request.tool_call.tool_call_id
            assert request.tool_call.kind == kinds[call_id]
            assert diffs(request.tool_call.content) == expected[call_id]
            if expected[call_id]:  # CodeCompanion shows a diff when the first content is one,
                assert request.tool_call.content[0].type == "diff"
                # and names the diff view after the first location.
                assert request.tool_call.locations[0].path == expected[call_id][0][0]
        assert request.tool_call.title == "echo checked"

        # Approved: the changes happened, and the completed cards carry the final diffs.
        assert a.read_text() == "import sys\nx = 2\nprint(x)\n"
        assert new.read_text() == "hello\n" and not old.exists()
        cards = agent.client.cards()
        for call_id in "ewd":
            assert cards[call_id]["statuses"][-1] == "completed"
            assert diffs(cards[call_id]["content"]) == expected[call_id]


async def test_a_proposal_that_cannot_apply_shows_no_diff_and_fails_as_before(
    agent_factory,
) -> None:
    turns = [
        {
            "tool_calls": [
                call("nf", "edit_file", file_path="a.py", old_string="nowhere", new_string="y"),
                call("nx", "edit_file", file_path="missing.py", old_string="a", new_string="b"),
                call("dx", "delete", file_path="missing.txt"),
                call("out", "write_file", file_path="../outside.txt", content="no"),
            ]
        },
        {"content": "noted"},
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        assert (await agent.prompt(session, "try")).stop_reason == "end_turn"
        cards = agent.client.cards()
        for call_id in ("nf", "nx", "dx", "out"):
            assert pending(agent.client, call_id).content is None
            assert cards[call_id]["statuses"][-1] == "failed"
        asked = {r.tool_call.tool_call_id: r.tool_call for r in agent.client.permission_requests}
        assert all(t.content is None and t.kind in ("edit", "delete") for t in asked.values())
        assert "nf" not in asked  # an edit whose old text is not there is not put to the user
        assert "old_string was not found" in texts(cards["nf"]["content"])[0]
        assert (agent.workspace / "a.py").read_text() == "x = 1\n"
        assert not (agent.workspace.parent / "outside.txt").exists()


async def test_the_proposed_diff_starts_from_the_editor_buffer(
    agent_factory, editor_client, capabilities
) -> None:
    edit = call("e", "edit_file", file_path="app.py", old_string="unsaved", new_string="edited")
    turns = [{"tool_calls": [edit]}, {"content": "done"}]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        path = agent.workspace / "app.py"
        path.write_text("value = 'saved'\n")
        editor_client.buffers[str(path)] = "value = 'unsaved'\n"
        session = await agent.new_session()
        assert (await agent.prompt(session, "edit")).stop_reason == "end_turn"
        [request] = editor_client.permission_requests
        proposed = [(str(path), "value = 'unsaved'\n", "value = 'edited'\n")]
        assert diffs(pending(editor_client, "e").content) == proposed
        assert diffs(request.tool_call.content) == proposed
        assert editor_client.writes == [(str(path), "value = 'edited'\n")]
        assert path.read_text() == "value = 'saved'\n"  # the preview never wrote anything


async def test_the_completed_diff_is_the_change_made_when_the_file_moved_on(
    agent_factory,
) -> None:
    turns = [
        {"tool_calls": [call("e", "edit_file", file_path="a.py", old_string="1", new_string="2")]},
        {"content": "done"},
    ]
    async with agent_factory(turns) as agent:
        path = agent.workspace / "a.py"
        path.write_text("x = 1\n")

        async def user_edits_meanwhile(request: S.RequestPermissionRequest) -> None:
            path.write_text("# a comment\nx = 1\n")

        agent.client.on_permission = user_edits_meanwhile
        session = await agent.new_session()
        await agent.prompt(session, "bump")
        assert diffs(pending(agent.client, "e").content) == [(str(path), "x = 1\n", "x = 2\n")]
        final = diffs(agent.client.cards()["e"]["content"])
        assert final == [(str(path), "# a comment\nx = 1\n", "# a comment\nx = 2\n")]


def log_text(home: Path) -> str:
    return (home / "logs" / "deepacp.log").read_text()


async def test_an_error_in_place_of_a_permission_answer_is_a_rejection(
    agent_factory, model_requests
) -> None:
    turns = [
        {"tool_calls": [call("w", "write_file", file_path="new.txt", content="hi")]},
        {"content": "Understood, I will not write it."},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        # What the ACP Python SDK's example client answers: it does not implement the method.
        agent.client.answers = [RequestError.method_not_found("session/request_permission")]
        response = await agent.prompt(session, "write a file")
        assert response.stop_reason == "end_turn"
        assert not (agent.workspace / "new.txt").exists()
        card = agent.client.cards()["w"]
        assert card["statuses"][-1] == "failed" and texts(card["content"]) == ["Rejected"]
        told = next(m for m in model_requests()[1]["messages"] if m.get("tool_call_id") == "w")
        assert "rejected" in told["content"]
        assert agent.client.text().endswith("Understood, I will not write it.")
        log = log_text(agent.home)
        assert "rejected" in log and "Traceback" not in log


async def test_an_error_in_place_of_a_choice_is_a_declined_question(
    agent_factory, model_requests
) -> None:
    question = call("q", "ask_user", question="Which database?", choices=["sqlite", "postgres"])
    turns = [{"tool_calls": [question]}, {"content": "I will ask again later."}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        agent.client.answers = [RequestError(-32603, "Internal error")]
        assert (await agent.prompt(session, "set it up")).stop_reason == "end_turn"
        [request] = agent.client.permission_requests
        assert request.tool_call.kind == "other"
        answer = next(m for m in model_requests()[1]["messages"] if m.get("tool_call_id") == "q")
        assert "declined" in answer["content"]
        assert "Traceback" not in log_text(agent.home)


async def test_cards_say_rejected_and_updated_the_plan_live_and_on_load(
    agent_factory, model_requests
) -> None:
    todos = {"todos": [{"content": "Read the code", "status": "in_progress"}]}
    turns = [
        {
            "tool_calls": [
                {"id": "p", "name": "write_todos", "args": todos},
                call("w", "write_file", file_path="new.txt", content="hi"),
            ]
        },
        {"content": "ok"},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        agent.client.answers = ["reject_once"]
        await agent.prompt(session, "plan and write")
        live = agent.client.cards()
        assert texts(live["p"]["content"]) == ["Updated the plan"]
        assert texts(live["w"]["content"]) == ["Rejected"]
        # The model keeps the wording written for it.
        told = {m.get("tool_call_id"): m["content"] for m in model_requests()[1]["messages"]}
        assert "Do not retry this tool call" in told["w"] and "Read the code" in told["p"]

        agent.client.updates.clear()
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        replayed = agent.client.cards()
        assert texts(replayed["p"]["content"]) == ["Updated the plan"]
        assert texts(replayed["w"]["content"]) == ["Rejected"]
