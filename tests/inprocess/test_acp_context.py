"""What an editor session puts in context: user and project memory, bundled skills."""

from __future__ import annotations


async def test_session_context_memory_and_skills(agent_factory, model_requests, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("The user prefers short answers.\n")
    turns = [
        {
            "tool_calls": [
                {
                    "id": "note",
                    "name": "edit_file",
                    "args": {
                        "file_path": "/user/AGENTS.md",
                        "old_string": "short",
                        "new_string": "very short",
                    },
                },
                {"id": "peek", "name": "read_file", "args": {"file_path": "/user/sessions.db"}},
                {
                    "id": "skill",
                    "name": "read_file",
                    "args": {"file_path": "/skills/bundled/code-review/SKILL.md"},
                },
                {
                    "id": "tamper",
                    "name": "write_file",
                    "args": {"file_path": "/skills/bundled/code-review/SKILL.md", "content": "x"},
                },
            ]
        },
        {"content": "ok"},
    ]
    async with agent_factory(turns, home=home) as agent:
        (agent.workspace / "AGENTS.md").write_text("Run tests with `make test`.\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "review")
        first, second = model_requests()
        assert (
            '<memory source="/user/AGENTS.md">\nThe user prefers short answers.' in first["system"]
        )
        assert '<memory source="AGENTS.md">\nRun tests with `make test`.' in first["system"]
        assert "- code-review: Review a change" in first["system"]
        assert "(/skills/bundled/code-review/SKILL.md)" in first["system"]
        assert "very short answers" in second["system"]  # memory edits show up at once
        assert (home / "AGENTS.md").read_text() == "The user prefers very short answers.\n"
        results = {
            m["tool_call_id"]: m["content"] for m in second["messages"] if "tool_call_id" in m
        }
        assert "not permitted" in results["peek"]  # the session store is not the agent's
        assert "# Reviewing a change" in results["skill"]
        assert "not permitted" in results["tamper"]
