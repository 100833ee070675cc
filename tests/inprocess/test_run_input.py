"""What `deepacp run` sends and where it continues: the prompt from stdin (`-`, or a pipe
when none is given), files attached with `--file`, `--max-turns`, and the session it
printed, taken up again with `--resume ID` or `--continue`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from deepacp.run import exits
from tests.support.cli import deepacp


def script(tmp_path: Path, turns: list, name: str = "script.json") -> tuple[str, Path]:
    """A scripted model that records each request; (its spec, the record file)."""
    record = tmp_path / f"{name}.requests.jsonl"
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns, "record": str(record)}))
    return f"scripted:{path}", record


def deepacp_run(
    tmp_path: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEEPACP_HOME": str(tmp_path / "home")}
    return deepacp("run", *args, cwd=tmp_path, env=env, input=stdin)


def human_texts(record: Path) -> list[str]:
    """The user's words in each recorded request, in order."""
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    return [m["content"] for r in requests for m in r["messages"] if m["type"] == "human"]


def test_the_prompt_comes_from_stdin_with_a_dash_or_a_pipe(tmp_path: Path) -> None:
    model, record = script(tmp_path, [{"content": "heard"}])
    dash = deepacp_run(tmp_path, "-q", "--model", model, "-", stdin="from the dash\n")
    assert (dash.returncode, dash.stdout) == (exits.OK, "heard\n"), dash.stderr
    piped = deepacp_run(tmp_path, "-q", "--model", model, stdin="from the pipe\n")
    assert (piped.returncode, piped.stdout) == (exits.OK, "heard\n"), piped.stderr
    texts = human_texts(record)
    assert "from the dash" in texts[0] and "from the pipe" in texts[-1]


def test_an_empty_stdin_is_a_usage_error_in_one_line(tmp_path: Path) -> None:
    model, _ = script(tmp_path, [{"content": "never"}])
    result = deepacp_run(tmp_path, "--model", model, "-", stdin="  \n")
    assert result.returncode == exits.USAGE
    assert result.stderr == "deepacp: the prompt on stdin is empty\n"


def test_files_are_attached_by_path_and_a_missing_one_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("the parser drops tabs\n")
    model, record = script(tmp_path, [{"content": "seen"}])
    result = deepacp_run(tmp_path, "--model", model, "--file", "notes.md", "read it")
    assert result.returncode == exits.OK, result.stderr
    [text] = human_texts(record)
    assert 'path="notes.md"' in text and "the parser drops tabs" in text and "read it" in text
    missing = deepacp_run(tmp_path, "--model", model, "--file", "nope.md", "read it")
    assert missing.returncode == exits.USAGE
    assert missing.stderr == "deepacp: --file nope.md: no such file\n"


def test_max_turns_stops_after_that_many_model_calls(tmp_path: Path) -> None:
    look = {"tool_calls": [{"id": "l", "name": "ls", "args": {"path": "."}}], "repeat": 1}
    model, record = script(tmp_path, [look, {**look, "content": "again"}, {"content": "done"}])
    argv = ("--output-format", "json", "--max-turns", "1", "--model", model, "look")
    result = deepacp_run(tmp_path, *argv)
    assert result.returncode == exits.STOPPED_SHORT, result.stderr
    assert json.loads(result.stdout)["stop_reason"] == "max_turn_requests"
    assert len(record.read_text().splitlines()) == 1  # the model was not called again
    bad = deepacp_run(tmp_path, "--max-turns", "0", "--model", model, "look")
    assert bad.returncode == exits.USAGE and "'0' is not a whole number of 1 or more" in bad.stderr


def test_the_printed_session_id_resumes_it_and_continue_takes_the_last(tmp_path: Path) -> None:
    model, record = script(tmp_path, [{"content": "noted"}])
    first = deepacp_run(tmp_path, "--model", model, "my colour is red")
    assert first.returncode == exits.OK, first.stderr
    session = first.stdout.strip().splitlines()[-1].removeprefix("[end_turn; session ")[:-1]
    again = deepacp_run(tmp_path, "--output-format", "json", "--resume", session, "which colour?")
    assert again.returncode == exits.OK, again.stderr
    assert json.loads(again.stdout)["session_id"] == session
    last = deepacp_run(tmp_path, "-q", "--continue", "and now?")
    assert last.returncode == exits.OK, last.stderr
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    said = [[m["content"] for m in r["messages"] if m["type"] == "human"] for r in requests]
    assert said[1][:2] == ["my colour is red", "which colour?"]
    assert said[2][-1] == "and now?" and said[2][0] == "my colour is red"
    unknown = deepacp_run(tmp_path, "--resume", "f" * 32, "hi")
    assert unknown.returncode == exits.USAGE and f"no session {'f' * 32}" in unknown.stderr
