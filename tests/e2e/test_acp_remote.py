"""`deepacp --stdio --remote ssh://…`: a session whose workspace is a checkout on another
machine (a real sshd on 127.0.0.1), driven by an editor over ACP."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.sshd import SshServer, ssh_server  # noqa: F401  (fixture)


def call(call_id: str, name: str, **args) -> dict:
    return {"id": call_id, "name": name, "args": args}


TURN = [
    {"tool_calls": [call("r", "read_file", file_path="app.py")]},
    {
        "tool_calls": [
            call("e", "edit_file", file_path="app.py", old_string="x = 1", new_string="x = 2")
        ]
    },
    {"tool_calls": [call("x", "execute", command="python3 app.py; hostname > ran.txt")]},
    {"content": "done"},
]


def diffs(content) -> list[tuple[str, str | None, str]]:
    return [
        (c.path, c.old_text, c.new_text)
        for c in content or []
        if isinstance(c, S.FileEditToolCallContent)
    ]


async def test_a_turn_over_ssh_reads_edits_with_approval_and_runs_a_command_there(
    agent_factory,
    editor_client,
    capabilities,
    ssh_server: SshServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    remote = tmp_path / "remote checkout"
    remote.mkdir()
    (remote / "app.py").write_text("import sys\nx = 1\nprint('x is', x)\n")
    async with agent_factory(
        TURN,
        client=editor_client,
        capabilities=capabilities(),
        args=("--remote", ssh_server.url(remote)),
        env=ssh_server.env(),
    ) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "bump x and run it")).stop_reason == "end_turn"

        assert (remote / "app.py").read_text() == "import sys\nx = 2\nprint('x is', x)\n"
        assert (remote / "ran.txt").exists()  # the command ran in the remote root
        cards = agent.client.cards(session)
        read_text = "".join(
            c.content.text for c in cards["r"]["content"] if isinstance(c, S.ContentToolCallContent)
        )
        assert "x = 1" in read_text
        asked = {r.tool_call.tool_call_id: r for r in agent.client.permission_requests}
        assert set(asked) == {"e", "x"}
        whole_file = [
            (
                "app.py",
                "import sys\nx = 1\nprint('x is', x)\n",
                "import sys\nx = 2\nprint('x is', x)\n",
            )
        ]
        assert diffs(asked["e"].tool_call.content) == whole_file  # what the user approved
        assert diffs(cards["e"]["content"]) == whole_file
        output = "".join(
            c.content.text for c in cards["x"]["content"] if isinstance(c, S.ContentToolCallContent)
        )
        assert "x is 2" in output
        # The editor's files and terminal are on another machine: none of them was used.
        assert editor_client.reads == [] and editor_client.writes == []
        assert editor_client.terminals == {}
        assert not (agent.workspace / "app.py").exists()


@pytest.mark.parametrize(
    ("remote", "message"),
    [
        ("ssh://", "is not a remote workspace URL|names no host"),
        ("ssh://127.0.0.1:1/srv", "cannot reach"),
        ("{url}/no/such/folder", "does not exist there"),
    ],
)
async def test_an_unusable_remote_is_a_one_line_error_at_session_new_and_the_server_stays_up(
    agent_factory,
    ssh_server: SshServer,  # noqa: F811
    tmp_path: Path,
    remote: str,
    message: str,
) -> None:
    url = remote.format(url=ssh_server.url(tmp_path))
    async with agent_factory(
        [{"content": "hi"}], args=("--remote", url), env=ssh_server.env()
    ) as agent:
        with pytest.raises(RequestError) as error:
            await agent.new_session()
        assert error.value.code == -32000 and "\n" not in str(error.value)
        assert re.search(message, str(error.value)), str(error.value)
        assert (await agent.conn.list_sessions()).sessions == []  # nothing stored, still up
