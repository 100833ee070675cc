"""Before a turn that changed files ends, the model is asked once to run the project's
checks; a turn that changed nothing is not asked, and `verify = false` turns it off."""

from __future__ import annotations

EDIT = {
    "tool_calls": [
        {
            "id": "e1",
            "name": "edit_file",
            "args": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
        }
    ]
}
CHECK = {"tool_calls": [{"id": "t1", "name": "execute", "args": {"command": "echo '3 passed'"}}]}


def project(workspace) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "pytest.ini").write_text("[pytest]\n")


async def test_a_turn_that_changed_files_is_checked_once_before_it_ends(
    agent_factory, model_requests
) -> None:
    turns = [EDIT, {"content": "Done."}, CHECK, {"content": "Checked: 3 passed."}]
    async with agent_factory(turns) as agent:
        project(agent.workspace)
        session = await agent.new_session()
        agent.client.answers = ["allow_once", "allow_once"]
        response = await agent.prompt(session, "bump x")
        assert response.stop_reason == "end_turn"
        asked = model_requests()[2]["messages"]
        assert asked[-2] == {"type": "ai", "content": "Done."}
        assert asked[-1]["type"] == "human"
        assert asked[-1]["content"].startswith("Before you finish: this turn changed a.py.")
        assert "(`pytest`;" in asked[-1]["content"]
        result = model_requests()[3]["messages"][-1]
        assert result["tool_call_id"] == "t1" and "3 passed" in result["content"]
        assert [r.tool_call.tool_call_id for r in agent.client.permission_requests] == ["e1", "t1"]
        assert agent.client.text().endswith("Checked: 3 passed.")
        assert "Before you finish" not in agent.client.text()  # a note to the model only
        assert len(model_requests()) == 4  # asked once: the last answer ends the turn


async def test_a_turn_that_changed_nothing_is_not_asked(agent_factory, model_requests) -> None:
    read = {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"file_path": "a.py"}}]}
    async with agent_factory([read, {"content": "x is 1."}]) as agent:
        project(agent.workspace)
        session = await agent.new_session()
        assert (await agent.prompt(session, "what is x?")).stop_reason == "end_turn"
        assert len(model_requests()) == 2


async def test_the_setting_turns_it_off(agent_factory, model_requests, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("verify = false\n")
    async with agent_factory([EDIT, {"content": "Done."}], home=home) as agent:
        project(agent.workspace)
        session = await agent.new_session()
        agent.client.answers = ["allow_once"]
        assert (await agent.prompt(session, "bump x")).stop_reason == "end_turn"
        assert (agent.workspace / "a.py").read_text() == "x = 2\n"
        assert len(model_requests()) == 2


async def test_a_memory_note_is_not_a_change_to_check(agent_factory, model_requests) -> None:
    note = {"id": "m1", "name": "write_file", "args": {"file_path": "AGENTS.md", "content": "x"}}
    async with agent_factory([{"tool_calls": [note]}, {"content": "Noted."}]) as agent:
        project(agent.workspace)
        session = await agent.new_session()
        agent.client.answers = ["allow_once"]
        assert (await agent.prompt(session, "remember x")).stop_reason == "end_turn"
        assert len(model_requests()) == 2
