"""`deepacp --stdio --remote ssh://…` (and `docker://…`): a session whose workspace is a
checkout on another machine (a real sshd on 127.0.0.1, a real Docker container), driven by
an editor over ACP."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.acp import DEEPACP
from tests.support.docker import DockerBox
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


@pytest.fixture(params=["ssh", "docker"])
def machine(request: pytest.FixtureRequest) -> SshServer | DockerBox:
    """The other machine, reached by each runner."""
    return request.getfixturevalue("ssh_server" if request.param == "ssh" else "docker_box")


async def test_a_turn_on_a_remote_reads_edits_with_approval_and_runs_a_command_there(
    agent_factory,
    editor_client,
    capabilities,
    machine: SshServer | DockerBox,
    tmp_path: Path,
) -> None:
    remote = tmp_path / "remote checkout"
    remote.mkdir()
    (remote / "app.py").write_text("import sys\nx = 1\nprint('x is', x)\n")
    async with agent_factory(
        TURN,
        client=editor_client,
        capabilities=capabilities(),
        args=("--remote", machine.url(remote)),
        env=machine.env(),
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


async def test_on_a_remote_commands_are_asked_in_accept_edits_and_cannot_be_sandboxed(
    agent_factory,
    ssh_server: SshServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    remote = tmp_path / "checkout"
    remote.mkdir()
    turns = [
        {"tool_calls": [call("w", "write_file", file_path="notes.txt", content="hi\n")]},
        {"tool_calls": [call("x", "execute", command="cat notes.txt > copy.txt")]},
        {"content": "done"},
    ]
    async with agent_factory(
        turns, args=("--remote", ssh_server.url(remote)), env=ssh_server.env()
    ) as agent:
        session = await agent.new_session()
        with pytest.raises(RequestError):
            await agent.conn.set_config_option(
                config_id="sandbox", session_id=session, value="workspace-write"
            )
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        agent.client.answers = ["reject_once"]
        assert (await agent.prompt(session, "copy the notes")).stop_reason == "end_turn"
        asked = [r.tool_call.tool_call_id for r in agent.client.permission_requests]
        assert asked == ["x"]  # the edit needed no question; the unsandboxed command did
        assert (remote / "notes.txt").read_text() == "hi\n"
        assert not (remote / "copy.txt").exists()
        assert "without a sandbox" in agent.client.text(session)


EDIT = [
    {"tool_calls": [call("e", "edit_file", file_path="a.py", old_string="1", new_string="2")]},
    {"content": "Done."},
]


def test_deepacp_run_edits_the_remote_checkout(
    ssh_server: SshServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    remote = tmp_path / "checkout"
    remote.mkdir()
    (remote / "a.py").write_text("x = 1\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": EDIT}))
    env = {**os.environ, **ssh_server.env(), "DEEPACP_HOME": str(tmp_path / "home")}
    argv = [DEEPACP, "run", "--mode", "yolo", "--model", f"scripted:{script}", "bump"]
    done = subprocess.run(
        [*argv[:2], "--remote", ssh_server.url(remote), *argv[2:]],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "-x = 1\n+x = 2" in done.stdout
    assert (remote / "a.py").read_text() == "x = 2\n"
    bad = subprocess.run(
        [*argv[:2], "--remote", "ssh://127.0.0.1:1/srv", *argv[2:]],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    cause, where = bad.stderr.splitlines()  # one line for the cause, one for the log
    assert bad.returncode == 3  # deepacp.run.exits.PROVIDER: a machine not reached
    assert cause.startswith("deepacp: cannot reach ssh://127.0.0.1:1/srv")
    assert where.startswith("deepacp: the details are in ")
