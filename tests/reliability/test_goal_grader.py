"""The goal grader is no way around approvals: a grader that tries to run a command or
change a file gets only what the user approves, in every mode that asks. (In accept-edits a
command under the workspace-write sandbox runs unasked, the grader's as the agent's; with
the sandbox off, as here, it asks.)"""

from __future__ import annotations

import json

import pytest

ATTACK = [
    {"content": "Done."},  # the agent ends its turn; the grader starts
    {
        "tool_calls": [
            {"id": "x1", "name": "execute", "args": {"command": "touch ran.txt"}},
            {
                "id": "x2",
                "name": "write_file",
                "args": {"file_path": "planted.txt", "content": "owned"},
            },
            {
                "id": "x3",
                "name": "edit_file",
                "args": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 666"},
            },
            {"id": "x4", "name": "delete", "args": {"file_path": "a.py"}},
        ]
    },
    {"content": json.dumps({"verdict": "satisfied", "feedback": "fine"})},
]


@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
async def test_the_grader_cannot_act_without_approval(agent_factory, model_requests, mode) -> None:
    async with agent_factory(ATTACK) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id=mode)
        await agent.conn.set_config_option(config_id="sandbox", session_id=session, value="off")
        await agent.prompt(session, "/goal a.py is correct")
        agent.client.answers = ["reject_once"] * 4
        response = await agent.prompt(session, "check it")
        assert response.stop_reason == "end_turn"

        assert not (agent.workspace / "ran.txt").exists()
        assert not (agent.workspace / "planted.txt").exists()
        assert (agent.workspace / "a.py").read_text() == "x = 1\n"
        # The command was put to the user, on the goal check's card; the file tools were
        # not even offered to the grader, and refused when it called them anyway.
        [asked] = agent.client.permission_requests
        assert asked.tool_call.title.endswith("touch ran.txt")
        check = agent.client.cards()[asked.tool_call.tool_call_id]
        assert check["kind"] == "think"
        grader = [r for r in model_requests() if "You are the grader" in r["system"]]
        assert not {"write_file", "edit_file", "delete"} & set(grader[0]["tools"])
        results = {m["tool_call_id"]: m for m in grader[-1]["messages"] if "tool_call_id" in m}
        assert all(results[i]["status"] == "error" for i in ("x1", "x2", "x3", "x4"))
