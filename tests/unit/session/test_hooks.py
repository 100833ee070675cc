"""Hooks: which entries match a tool call, what a payload holds and where it is cut, what a
hook's exit status and output decide, and how a bad hooks file is refused."""

from __future__ import annotations

import json

import pytest

from deepacp.events import Notice
from deepacp.session.hooks import SessionHooks
from deepacp.session.hooks.config import Hook, HooksConfigError, parse_hooks, read_hooks
from deepacp.session.hooks.process import HookRun, Verdict, verdict
from deepacp.session.hooks.runner import TEXT_LIMIT, hook_payload


def tool(name: str, **args) -> dict:
    return {"tool_name": name, "tool_call_id": "c1", "tool_args": args}


@pytest.mark.parametrize(
    ("hook", "fields", "expected"),
    [
        (Hook("pre_tool_use", "x"), tool("read_file", file_path="a.py"), True),
        (Hook("pre_tool_use", "x", tool="execute"), tool("execute", command="ls"), True),
        (Hook("pre_tool_use", "x", tool="execute"), tool("read_file", file_path="a"), False),
        (Hook("pre_tool_use", "x", tool="*_file"), tool("edit_file", file_path="a"), True),
        (
            Hook("pre_tool_use", "x", match="git push*"),
            tool("execute", command="git push -f"),
            True,
        ),
        (Hook("pre_tool_use", "x", match="git push*"), tool("execute", command="git pull"), False),
        (
            Hook("pre_tool_use", "x", match="src/*.py"),
            tool("write_file", file_path="src/a.py"),
            True,
        ),
        (Hook("pre_tool_use", "x", match="*.py"), tool("ls", path="docs/a.md"), False),
        (Hook("pre_tool_use", "x", match="*"), tool("write_todos", todos=[]), False),
    ],
)
def test_a_matcher_picks_the_tool_and_globs_its_command_or_path(hook, fields, expected) -> None:
    assert hook.matches(fields) is expected


COMMON = {"session_id": "s", "cwd": "/w", "seq": 1}


def test_long_texts_are_cut_to_the_limit_and_named() -> None:
    fields = {**tool("execute", command="x" * 20_000), "tool_output": "y" * 50_000}
    payload = hook_payload("post_tool_use", fields, COMMON)
    assert len(payload["tool_output"]) == TEXT_LIMIT
    assert len(payload["tool_args"]["command"]) == TEXT_LIMIT
    assert payload["truncated"] == ["tool_args", "tool_output"]
    assert {k: payload[k] for k in ("event", "session_id", "cwd", "seq")} == {
        "event": "post_tool_use",
        **COMMON,
    }


def test_arguments_a_hook_judges_or_rewrites_are_sent_whole() -> None:
    fields = tool("write_file", file_path="a", content="z" * 50_000)
    payload = hook_payload("pre_tool_use", fields, COMMON)
    assert payload["tool_args"]["content"] == "z" * 50_000 and payload["truncated"] == []


def test_a_payload_carries_no_secret(monkeypatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "s3cr3t-value-123")
    payload = hook_payload("post_tool_use", {"tool_output": "key=s3cr3t-value-123"}, COMMON)
    assert "s3cr3t" not in json.dumps(payload)


def run(code: int | None, out: str = "", err: str = "", timed_out: bool = False) -> HookRun:
    return HookRun(code, out, err, timed_out)


@pytest.mark.parametrize(
    ("done", "expected"),
    [
        (run(0), Verdict()),
        (run(0, '{"decision": "allow"}'), Verdict("allow")),
        (run(0, '{"decision": "deny", "reason": "no"}'), Verdict("deny", "no")),
        (run(2, err="not on main\n"), Verdict("deny", "not on main")),
        (run(0, '{"args": {"command": "ls -a"}}'), Verdict(args={"command": "ls -a"})),
    ],
)
def test_exit_status_and_json_decide(done, expected) -> None:
    assert verdict(done, blocking=True, timeout=5, rewrites=True) == expected


@pytest.mark.parametrize(
    ("done", "problem"),
    [
        (run(None, timed_out=True), "did not finish in 5 s and was killed"),
        (run(1, err="boom\nTraceback: oops"), "failed with exit status 1: Traceback: oops"),
        (run(0, "hello"), "printed something other than a JSON object; ignored"),
        (run(0, "[" * 100_000), "printed something other than a JSON object; ignored"),
        (run(0, '{"decision": "maybe"}'), 'replied with a "decision" other than allow'),
        (run(0, '{"args": [1]}'), 'replied with "args" that are not an object'),
    ],
)
def test_a_failing_hook_decides_nothing_and_says_why(done, problem) -> None:
    found = verdict(done, blocking=True, timeout=5, rewrites=True)
    assert found.decision == "none" and found.args is None
    assert found.problem is not None and found.problem.startswith(problem)


def test_only_pre_tool_use_may_rewrite_and_non_blocking_output_is_ignored() -> None:
    rewrite = run(0, '{"args": {"a": 1}}')
    assert verdict(rewrite, blocking=True, timeout=5, rewrites=False).problem is not None
    assert verdict(run(0, "anything"), blocking=False, timeout=5, rewrites=False) == Verdict()
    assert verdict(run(2), blocking=False, timeout=5, rewrites=False).problem is not None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000, "not valid JSON (nested too deeply)"),  # a repository's hooks file
        ("[]", 'expected an object with one key, "hooks"'),
        ('{"hooks": {}}', '"hooks" must be a list'),
        ('{"hooks": [1]}', "entry 1 must be an object"),
        ('{"hooks": [{"event": "nope", "command": "x"}]}', "entry 1: event must be one of"),
        ('{"hooks": [{"event": "stop", "command": ""}]}', "entry 1: command must be a non-empty"),
        ('{"hooks": [{"event": "stop", "command": "a\\u0000b"}]}', "entry 1: command must be"),
        ('{"hooks": [{"event": "stop", "command": "x", "tool": "execute"}]}', "entry 1: tool"),
        (
            '{"hooks": [{"event": "stop", "command": "x", "timeout": "1"}]}',
            "entry 1: timeout must be a n",
        ),
        (
            '{"hooks": [{"event": "stop", "command": "x", "timeout": 0}]}',
            "entry 1: timeout must be betw",
        ),
        (
            '{"hooks": [{"event": "stop", "command": "x", "timeout": true}]}',
            "entry 1: timeout must be a n",
        ),
        (
            '{"hooks": [{"event": "stop", "command": "x", "when": 1}]}',
            "entry 1: unknown key 'when'",
        ),
    ],
)
def test_a_bad_hooks_file_is_refused_with_what_is_wrong(text, problem) -> None:
    with pytest.raises(ValueError) as raised:
        parse_hooks(text, "user")
    assert str(raised.value).startswith(problem)


def test_a_hooks_file_is_read_with_its_digest_and_refused_whole(tmp_path) -> None:
    path = tmp_path / "hooks.json"
    assert read_hooks(path, "project") is None
    path.write_text('{"hooks": [{"event": "stop", "command": "true", "timeout": 2}]}')
    found = read_hooks(path, "project")
    assert found is not None and found.hooks == (
        Hook("stop", "true", timeout=2.0, source="project"),
    )
    path.write_text('{"hooks": [{"event": "stop", "command": "true "}]}')
    changed = read_hooks(path, "project")
    assert changed is not None and changed.digest != found.digest
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(HooksConfigError, match="no hook of this file runs"):
        read_hooks(path, "project")


class Handler:
    def __init__(self) -> None:
        self.events: list = []

    async def emit(self, event) -> None:
        self.events.append(event)

    async def ask_permission(self, request):
        raise AssertionError("nothing to ask")

    async def ask(self, question):
        raise AssertionError("nothing to ask")


def session_hooks(tmp_path, *hooks: Hook) -> tuple[SessionHooks, Handler]:
    handler = Handler()
    runner = SessionHooks("s1", str(tmp_path), tmp_path / "home", handler)
    runner.hooks = hooks
    return runner, handler


async def test_blocking_hooks_run_in_order_the_rewrite_is_seen_and_a_deny_wins(tmp_path) -> None:
    rewrite = """cat >/dev/null; echo '{"args": {"command": "ls -la"}}'"""
    judge = 'grep -q "ls -la" && { echo "saw the rewrite" >&2; exit 2; }; exit 0'
    runner, _ = session_hooks(tmp_path, Hook("pre_tool_use", rewrite), Hook("pre_tool_use", judge))
    found = await runner.decide("pre_tool_use", tool("execute", command="ls"))
    assert (found.decision, found.reason) == ("deny", "saw the rewrite")


async def test_a_failing_hook_is_told_and_decides_nothing(tmp_path) -> None:
    runner, handler = session_hooks(
        tmp_path,
        Hook("user_prompt_submit", "echo broken >&2; exit 3"),
        Hook("user_prompt_submit", "/no/such/program"),
    )
    found = await runner.decide("user_prompt_submit", {"prompt": "hello"})
    assert found == Verdict()
    told = [e.text for e in handler.events if isinstance(e, Notice)]
    hook = "The user_prompt_submit hook `echo broken >&2; exit 3`"
    assert told[0] == f"{hook} failed with exit status 3: broken."
    assert "exit status 127" in told[1]


async def test_background_hooks_are_waited_for_at_close(tmp_path) -> None:
    log = tmp_path / "ends.log"
    runner, _ = session_hooks(tmp_path, Hook("session_end", f"cat >> {log}"))
    runner._started = True
    await runner.close()
    assert json.loads(log.read_text())["event"] == "session_end"


def test_the_trust_question_shows_every_hook_and_marks_what_it_shortens() -> None:
    from pathlib import Path

    from deepacp.session.hooks.config import HooksFile
    from deepacp.session.hooks.trust import trust_question

    hidden = "a\n\n\u202e; curl evil"  # line breaks and a direction override, escaped
    hooks = (Hook("stop", "true " + "x" * 5_000 + " tail"), Hook("permission_request", hidden))
    title = trust_question(HooksFile(Path("h.json"), hooks, "d")).title
    assert "2 hooks: 1. stop: true xxx" in title and "xxx tail; " in title
    assert "[4,710 characters not shown]" in title
    assert title.endswith("2. permission_request: a\\u000a\\u000a\\u202e; curl evil")
    many = tuple(Hook("stop", "y" * 300) for _ in range(40))
    with pytest.raises(HooksConfigError, match="too many hooks to show in one question"):
        trust_question(HooksFile(Path("h.json"), many, "d"))
