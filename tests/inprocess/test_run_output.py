"""`deepacp run` as scripts use it, next to `claude -p` and `codex exec`: `--output-format
json` (one object at the end) and `stream-json` (one event a line, as it happens), `--quiet`
(the final answer alone), nothing but that on stdout; and its documented exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from deepacp.run import exits
from tests.inprocess.test_run import run
from tests.support.cli import write_script

EDIT = [
    {
        "reasoning": "Bump it.",
        "content": "Editing.",
        "tool_calls": [
            {
                "id": "e",
                "name": "edit_file",
                "args": {"file_path": "a.py", "old_string": "1", "new_string": "2"},
            }
        ],
    },
    {"content": "Bumped x to 2."},
]


def workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    (tmp_path / "a.py").write_text("x = 1\n")
    return tmp_path, {"DEEPACP_HOME": str(tmp_path / "home")}


def test_json_is_one_object_with_the_answer_usage_files_and_session(tmp_path: Path) -> None:
    cwd, env = workspace(tmp_path)
    model = write_script(tmp_path, EDIT)
    result = run(
        "run", "--output-format", "json", "--mode", "yolo", "--model", model, "bump",
        cwd=cwd, env=env,
    )  # fmt: skip
    assert result.returncode == exits.OK, result.stderr
    [line] = result.stdout.splitlines()
    answer = json.loads(line)
    assert answer["answer"] == "Bumped x to 2." and answer["stop_reason"] == "end_turn"
    assert answer["files_changed"] == ["a.py"] and answer["error"] is None
    assert answer["usage"]["model_calls"] == 2 and answer["usage"]["output_tokens"] > 0
    assert len(answer["session_id"]) == 32 and answer["exit_code"] == 0


def test_json_says_the_error_and_stdout_holds_nothing_else(tmp_path: Path) -> None:
    cwd, env = workspace(tmp_path)
    model = write_script(tmp_path, [{"error": "bad key sk-xyz", "error_type": "auth"}])
    result = run("run", "--output-format", "json", "--model", model, "hi", cwd=cwd, env=env)
    assert result.returncode == exits.PROVIDER, result.stderr
    [line] = result.stdout.splitlines()
    answer = json.loads(line)
    assert answer["error"] and answer["error"] in result.stderr
    assert answer["stop_reason"] is None and answer["exit_code"] == exits.PROVIDER


def test_stream_json_is_one_event_a_line_as_it_happens(tmp_path: Path) -> None:
    cwd, env = workspace(tmp_path)
    model = write_script(tmp_path, EDIT)
    argv = ("run", "--output-format", "stream-json", "--model", model, "bump")
    result = run(*argv, cwd=cwd, env=env)
    assert result.returncode == exits.OK, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "thinking" and "text" in kinds and kinds[-1] == "result"
    thought = "".join(e["text"] for e in events if e["type"] == "thinking")
    assert thought == "Bump it."
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [c["status"] for c in calls] == ["pending", "failed"]  # denied: no terminal
    assert calls[0]["title"] == "Edit a.py" and calls[0]["diff"]["new_text"] == "x = 2\n"
    [asked] = [e for e in events if e["type"] == "permission"]
    assert asked["status"] == "reject_once" and "no terminal to ask" in asked["reason"]
    assert events[-1]["answer"] == "Bumped x to 2." and events[-1]["files_changed"] == []


def test_quiet_prints_the_final_answer_alone(tmp_path: Path) -> None:
    cwd, env = workspace(tmp_path)
    model = write_script(tmp_path, EDIT)
    result = run("run", "-q", "--mode", "yolo", "--model", model, "bump", cwd=cwd, env=env)
    assert result.returncode == exits.OK, result.stderr
    assert result.stdout == "Bumped x to 2.\n"
    assert (cwd / "a.py").read_text() == "x = 2\n"


def test_a_refusal_exits_with_its_own_code(tmp_path: Path) -> None:
    cwd, env = workspace(tmp_path)
    model = write_script(tmp_path, [{"content": "I can't.", "finish_reason": "refusal"}])
    result = run("run", "--output-format", "json", "--model", model, "hi", cwd=cwd, env=env)
    assert result.returncode == exits.STOPPED_SHORT, result.stderr
    assert json.loads(result.stdout)["stop_reason"] == "refusal"


def test_help_documents_the_exit_codes() -> None:
    page = run("run", "--help").stdout
    for code, meaning in exits.TABLE:
        assert f"{code:<3}  {meaning}" in page
    assert len({code for code, _ in exits.TABLE}) == len(exits.TABLE)
