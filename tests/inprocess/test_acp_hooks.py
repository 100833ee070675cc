"""Hooks over ACP: the user's commands run on the session's events with their documented
payloads, decide about prompts, tool calls and the end of the turn, are killed at their
timeout, and a workspace's hooks run only once the user trusts them."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.waits import marked, marked_pids, wait_for

RECORDER = """\
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(payload) + "\\n")
if len(sys.argv) > 2:
    sys.stdout.write(sys.argv[2])
"""
"""A hook that appends its payload to a log (argv 1) and replies with argv 2, if given."""


def recorder(workspace: Path, reply: dict | None = None, log: str = "hooks.log") -> str:
    """The command of a recording hook (it lives in the workspace, which the sandbox shows)."""
    script = workspace / "record_hook.py"
    script.write_text(RECORDER)
    command = f"{sys.executable} {script} {workspace / log}"
    return f"{command} '{json.dumps(reply)}'" if reply is not None else command


def logged(workspace: Path, log: str = "hooks.log") -> list[dict[str, Any]]:
    path = workspace / log
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def write_hooks(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": entries}))
    return path


def notices(client) -> str:
    return client.text()


def call(call_id: str, name: str, **args: Any) -> dict:
    return {"id": call_id, "name": name, "args": args}


EVERYTHING = [
    {
        "tool_calls": [
            call("x1", "execute", command="echo hi"),
            call("r1", "read_file", file_path="missing.txt"),
        ]
    },
    {
        "tool_calls": [
            call("t1", "task", description="Look around.", subagent_type="general-purpose")
        ]
    },
    {"content": "Looked around."},
    {"content": "All done."},
]
EVENTS = (
    "session_start",
    "session_end",
    "user_prompt_submit",
    "pre_tool_use",
    "post_tool_use",
    "post_tool_use_failure",
    "permission_request",
    "pre_compact",
    "subagent_start",
    "subagent_stop",
    "stop",
    "input_required",
)


async def test_every_event_fires_with_its_documented_payload(tmp_path, agent_factory) -> None:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    hook = recorder(workspace)
    write_hooks(home / "hooks.json", [{"event": e, "command": hook} for e in EVENTS])
    async with agent_factory(EVERYTHING) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "look around")).stop_reason == "end_turn"
        assert (await agent.prompt(session, "/compact")).stop_reason == "end_turn"
        await agent.conn.close_session(session_id=session)

        def seen() -> set[str]:
            return {p["event"] for p in logged(workspace)}

        await wait_for(lambda: seen() == set(EVENTS))
        payloads = logged(workspace)
        for payload in payloads:
            assert payload["session_id"] == session and payload["cwd"] == str(workspace)
        by_event: dict[str, list[dict]] = {}
        for payload in payloads:
            by_event.setdefault(payload["event"], []).append(payload)
        assert [p["prompt"] for p in by_event["user_prompt_submit"]] == ["look around", "/compact"]
        assert {p["tool_call_id"]: p["tool_name"] for p in by_event["pre_tool_use"]} == {
            "x1": "execute",
            "r1": "read_file",
            "t1": "task",
        }
        [ran] = [p for p in by_event["post_tool_use"] if p["tool_call_id"] == "x1"]
        assert ran["tool_status"] == "success" and "hi" in ran["tool_output"]
        assert ran["tool_args"] == {"command": "echo hi"} and ran["truncated"] == []
        [failed] = by_event["post_tool_use_failure"]
        assert (failed["tool_call_id"], failed["tool_status"]) == ("r1", "error")
        assert "missing.txt" in failed["tool_output"]
        [asked] = by_event["permission_request"]
        assert (asked["tool_call_id"], asked["tool_args"]) == ("x1", {"command": "echo hi"})
        [waiting] = by_event["input_required"]
        assert (waiting["kind"], waiting["tool_call_id"]) == ("permission", "x1")
        [started] = by_event["subagent_start"]
        assert started["subagent_type"] == "general-purpose"
        assert started["description"] == "Look around."
        [stopped] = by_event["subagent_stop"]
        assert stopped["tool_status"] == "success" and stopped["report"] == "Looked around."
        [stop] = by_event["stop"]
        assert (stop["stop_reason"], stop["continued"]) == ("end_turn", 0)
        assert [p["trigger"] for p in by_event["pre_compact"]] == ["manual"]
        assert len(by_event["session_start"]) == len(by_event["session_end"]) == 1
        order = [p["seq"] for p in payloads]
        assert len(set(order)) == len(order)  # one sequence number per event
        first = {e: min(p["seq"] for p in ps) for e, ps in by_event.items()}
        assert first["session_start"] < first["user_prompt_submit"] < first["pre_tool_use"]
        assert first["stop"] < first["pre_compact"] < first["session_end"]


DENIED = [
    {"tool_calls": [call("p1", "execute", command="git push origin main")]},
    {"content": "I will not push."},
]


async def test_a_pre_tool_use_hook_denies_a_command_and_the_model_reads_why(
    tmp_path, agent_factory, model_requests
) -> None:
    home = tmp_path / "home"
    deny = "cat >/dev/null; echo 'pushing is for humans' >&2; exit 2"
    write_hooks(
        home / "hooks.json",
        [{"event": "pre_tool_use", "tool": "execute", "match": "git push*", "command": deny}],
    )
    async with agent_factory(DENIED) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "push it")).stop_reason == "end_turn"
        assert agent.client.permission_requests == []  # refused before anyone was asked
        [_, second] = model_requests()
        [result] = [m for m in second["messages"] if m.get("tool_call_id") == "p1"]
        assert "pushing is for humans" in json.dumps(result)
        card = agent.client.cards()["p1"]
        assert card["statuses"][-1] == "failed"


REWRITTEN = [
    {"tool_calls": [call("w1", "write_file", file_path="out.txt", content="from the model\n")]},
    {"content": "Written."},
]


async def test_a_pre_tool_use_hook_rewrites_the_arguments(tmp_path, agent_factory) -> None:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    reply = {"decision": "allow", "args": {"file_path": "out.txt", "content": "from the hook\n"}}
    hook = recorder(workspace, reply)
    write_hooks(
        home / "hooks.json", [{"event": "pre_tool_use", "tool": "write_file", "command": hook}]
    )
    async with agent_factory(REWRITTEN) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "write it")).stop_reason == "end_turn"
        assert (workspace / "out.txt").read_text() == "from the hook\n"
        [asked] = agent.client.permission_requests  # about the call as the hook left it
        [diff] = [
            c for c in asked.tool_call.content or [] if isinstance(c, S.FileEditToolCallContent)
        ]
        assert diff.new_text == "from the hook\n"
        [payload] = logged(workspace)  # asked once, not again when the approved call resumed
        assert payload["tool_args"]["content"] == "from the model\n"
        assert "A hook changed the arguments of write_file (w1)" in notices(agent.client)


SENT_BACK = [
    {"content": "Finished, I think."},
    {"content": "Now the tests pass."},
]


async def test_a_stop_hook_sends_the_agent_back_once(
    tmp_path, agent_factory, model_requests
) -> None:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    hook = recorder(workspace, {"decision": "deny", "reason": "Run the tests first."})
    write_hooks(home / "hooks.json", [{"event": "stop", "command": hook}])
    async with agent_factory(SENT_BACK) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "finish")).stop_reason == "end_turn"
        requests = model_requests()
        assert len(requests) == 2  # sent back once, and then the turn ended
        last_user = [m for m in requests[1]["messages"] if m["type"] == "human"][-1]
        assert "Run the tests first." in json.dumps(last_user)
        assert agent.client.text().endswith("Now the tests pass.")
        assert (
            "A stop hook sent the agent back to work: Run the tests first." in agent.client.text()
        )
        await wait_for(lambda: [p["continued"] for p in logged(workspace)] == [0, 1])


async def test_a_hanging_hook_is_killed_at_its_timeout_and_the_turn_ends(
    tmp_path, agent_factory
) -> None:
    marker = f"hanging-hook-{uuid.uuid4().hex}"  # tmp_path.name is the same in every worker
    hang = marked("cat >/dev/null; sleep 300 & sleep 300", marker)  # a child of its own too
    write_hooks(
        tmp_path / "home" / "hooks.json",
        [
            {"event": "user_prompt_submit", "command": hang, "timeout": 1},
            {"event": "post_tool_use", "command": hang, "timeout": 1},
        ],
    )
    turns = [{"tool_calls": [call("l1", "ls", path=".")]}, {"content": "Listed."}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "list")).stop_reason == "end_turn"
        assert "Listed." in agent.client.text()
        assert "The user_prompt_submit hook" in agent.client.text()
        await wait_for(
            lambda: agent.client.text().count("did not finish in 1 s and was killed") == 2
        )
        await wait_for(lambda: marked_pids(marker) == [])  # the whole tree, not only the shell
        log = (tmp_path / "home" / "logs" / "deepacp.log").read_text()
        assert "The post_tool_use hook" in log and "did not finish in 1 s" in log


GATED = [{"tool_calls": [call("g1", "execute", command="rm -rf build")]}, {"content": "Stopped."}]


async def test_hooks_refuse_a_prompt_and_answer_a_permission_request(
    tmp_path, agent_factory, model_requests
) -> None:
    refuse = "grep -q secret-project && { echo 'not about that' >&2; exit 2; } || true"
    no_rm = """cat >/dev/null; echo '{"decision": "deny", "reason": "no rm here"}' """
    write_hooks(
        tmp_path / "home" / "hooks.json",
        [
            {"event": "user_prompt_submit", "command": refuse},
            {"event": "permission_request", "match": "rm *", "command": no_rm},
        ],
    )
    async with agent_factory(GATED) as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "tell me about secret-project")
        assert response.stop_reason == "refusal"
        assert "A hook refused the prompt: not about that" in agent.client.text()
        assert model_requests() == []  # the model never saw it
        assert (await agent.prompt(session, "clean up")).stop_reason == "end_turn"
        assert agent.client.permission_requests == []  # the hook answered instead of the user
        [_, second] = model_requests()
        [result] = [m for m in second["messages"] if m.get("tool_call_id") == "g1"]
        assert "Refused by a hook: no rm here" in json.dumps(result)


async def test_a_message_steered_into_a_turn_is_judged_like_a_prompt(
    tmp_path, agent_factory, model_requests
) -> None:
    refuse = "grep -q secret-project && { echo 'not about that' >&2; exit 2; } || true"
    write_hooks(
        tmp_path / "home" / "hooks.json", [{"event": "user_prompt_submit", "command": refuse}]
    )
    turns = [{"content": "word " * 200, "delay_ms": 20}, {"content": "and more"}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        running = asyncio.create_task(agent.prompt(session, "talk"))
        await wait_for(lambda: len(agent.client.of(S.AgentMessageChunk)) >= 3, 30)
        text = [{"type": "text", "text": "now tell me about secret-project"}]
        with pytest.raises(RequestError) as refused:
            await agent.raw_request("_session/steering", {"sessionId": session, "prompt": text})
        assert "a hook refused the message: not about that" in str(refused.value)
        assert (await running).stop_reason == "end_turn"
        assert "A hook refused the message: not about that" in agent.client.text()
        assert "secret-project" not in json.dumps(model_requests())  # the model never saw it


UNTRUSTED = [{"content": "Hello."}, {"content": "Hello again."}]


def project_hooks(tmp_path: Path) -> tuple[Path, str, Path]:
    """A workspace whose own .deepacp/hooks.json runs a recorder on each prompt: the
    workspace, the hook's command and the hooks file."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    hook = recorder(workspace)
    hooks_file = workspace / ".deepacp" / "hooks.json"
    write_hooks(hooks_file, [{"event": "user_prompt_submit", "command": hook}])
    return workspace, hook, hooks_file


async def test_an_untrusted_project_hooks_file_asks_first_and_is_not_run_when_refused(
    tmp_path, agent_factory
) -> None:
    workspace, hook, _ = project_hooks(tmp_path)
    async with agent_factory(UNTRUSTED) as agent:
        session = await agent.new_session()
        agent.client.answers = ["reject_always"]
        assert (await agent.prompt(session, "hi")).stop_reason == "end_turn"
        [asked] = agent.client.permission_requests
        assert hook in (asked.tool_call.title or "")
        assert "user_prompt_submit" in (asked.tool_call.title or "")
        assert "not trusted, so they do not run" in agent.client.text()
        assert (await agent.prompt(session, "hi again")).stop_reason == "end_turn"
        assert len(agent.client.permission_requests) == 1  # the refusal is remembered
        assert logged(workspace) == []


async def test_a_trusted_project_hooks_file_runs_and_is_asked_again_once_changed(
    tmp_path, agent_factory
) -> None:
    workspace, hook, hooks_file = project_hooks(tmp_path)
    async with agent_factory(UNTRUSTED) as agent:
        agent.client.answers = ["allow_always"]  # trusted at the first prompt
        session = await agent.new_session()
        await agent.prompt(session, "hi")
        assert [p["prompt"] for p in logged(workspace)] == ["hi"]
        write_hooks(hooks_file, [{"event": "user_prompt_submit", "command": f"{hook} changed"}])
        agent.client.answers = ["reject_once"]
        await agent.prompt(session, "hi again")
        assert len(agent.client.permission_requests) == 2
        assert [p["prompt"] for p in logged(workspace)] == ["hi"]
    stored = json.loads((tmp_path / "home" / "hooks-trust.json").read_text())
    assert oct((tmp_path / "home" / "hooks-trust.json").stat().st_mode & 0o777) == "0o600"
    assert list(stored["workspaces"]) == [str(workspace.resolve())]


async def test_a_hostile_hooks_file_is_a_clear_notice_not_a_crash(tmp_path, agent_factory) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "hooks.json").write_text('{"hooks": [{"event": "stop", "command": 42}]}')
    workspace = tmp_path / "workspace"
    write_hooks(workspace / ".deepacp" / "hooks.json", [])
    (workspace / ".deepacp" / "hooks.json").write_text("{not json")
    async with agent_factory(UNTRUSTED) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "hi")).stop_reason == "end_turn"
        text = agent.client.text()
        assert (
            "entry 1: command must be a non-empty string without NUL; no hook of this file runs"
            in text
        )
        assert "not valid JSON" in text
        assert agent.client.permission_requests == []
        assert (await agent.prompt(session, "hi again")).stop_reason == "end_turn"
        assert agent.client.text().count("not valid JSON") == 1  # told once, not every prompt
        assert isinstance(agent.client.of(S.AgentMessageChunk)[-1], S.AgentMessageChunk)
