"""`deepacp run` and `deepacp --version/--help` as a script runs them, in this process
(tests/support/cli.py): what they print, change and exit with."""

import json
import os
from pathlib import Path

import pytest

from deepacp import __version__
from deepacp.backends.sandbox import sandbox_problem
from tests.support.cli import deepacp, write_script
from tests.support.turns import edit


def run(*args: str, cwd: Path | None = None, env: dict | None = None):
    return deepacp(*args, cwd=cwd, env={**os.environ, **(env or {})})


EDIT = [edit("e", "a.py", "1", "2", said="Editing."), {"content": "Done."}]


def test_version_and_help() -> None:
    assert run("--version").stdout.strip() == f"deepacp {__version__}"
    help_text = run("--help").stdout
    assert "--stdio" in help_text and "demo" in help_text and "run" in help_text


def test_run_denies_gated_calls_without_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    env = {"DEEPACP_HOME": str(tmp_path / "home")}
    result = run(
        "run", "--cwd", str(tmp_path), "--model", write_script(tmp_path, EDIT), "bump", env=env
    )
    assert result.returncode == 0, result.stderr
    assert "denied (no terminal to ask" in result.stdout
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_run_in_yolo_mode_does_not_run_a_command_outside_the_sandbox(tmp_path: Path) -> None:
    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    target = Path("/var/tmp") / f"deepacp-outside-{os.getpid()}-{tmp_path.name}.txt"
    escape = {"command": f"touch {target}", "outside_sandbox": True}
    turns = [{"tool_calls": [{"id": "x", "name": "execute", "args": escape}]}, {"content": "ok"}]
    env = {"DEEPACP_HOME": str(tmp_path / "home")}
    model = write_script(tmp_path, turns)
    result = run("run", "--mode", "yolo", "--model", model, "go", cwd=tmp_path, env=env)
    ran = target.exists()
    target.unlink(missing_ok=True)
    assert result.returncode == 0, result.stderr
    assert not ran
    assert "denied (no terminal to ask; --sandbox off runs every command" in result.stdout


def test_run_in_yolo_mode_edits_and_shows_the_diff(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    env = {"DEEPACP_HOME": str(tmp_path / "home")}
    model = write_script(tmp_path, EDIT)
    result = run("run", "--mode", "yolo", "--model", model, "bump", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "-x = 1\n+x = 2" in result.stdout and "Done." in result.stdout
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


def test_run_offers_no_background_tasks_it_would_not_outlive(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    script = tmp_path / "bg.json"
    script.write_text(json.dumps({"turns": [{"content": "ok"}], "record": str(requests)}))
    env = {"DEEPACP_HOME": str(tmp_path / "home")}
    result = run("run", "--model", f"scripted:{script}", "hi", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    [request] = [json.loads(line) for line in requests.read_text().splitlines()]
    assert "task" in request["tools"] and "start_background_task" not in request["tools"]


def test_run_without_a_model_is_one_readable_line(tmp_path: Path) -> None:
    result = run(
        "run", "hi", cwd=tmp_path, env={"DEEPACP_HOME": str(tmp_path), "DEEPACP_MODEL": ""}
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "no model configured" in result.stderr
    assert "Traceback" not in result.stderr


def test_broken_script_is_one_readable_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    result = run(
        "run", "--model", f"scripted:{bad}", "hi", cwd=tmp_path, env={"DEEPACP_HOME": str(tmp_path)}
    )
    assert result.returncode == 2
    assert "bad.json is not valid JSON" in result.stderr and "Traceback" not in result.stderr


def test_run_closes_its_session_and_leaves_it_to_resume(tmp_path: Path) -> None:
    import sqlite3

    home, workspace = tmp_path / "home", tmp_path / "w"
    workspace.mkdir()
    env = {"DEEPACP_HOME": str(home), "DEEPACP_MODEL": write_script(tmp_path, [{"content": "hi"}])}
    result = run("run", "--cwd", str(workspace), "say hi", env=env)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(home / "sessions.db") as db:
        assert db.execute("SELECT cwd, title FROM sessions").fetchall() == [
            (str(workspace), "say hi")
        ]
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)  # released
    assert list((home / "locks").glob("process-*.lock")) == []


def test_run_with_effort_asks_the_provider_to_think(tmp_path: Path) -> None:
    from tests.providers.anthropic_server import AnthropicServer
    from tests.providers.wire import Reply

    with AnthropicServer([Reply(thinking="Consider it.", text="Thought it through.")]) as server:
        env = {
            "DEEPACP_HOME": str(tmp_path / "home"),
            "DEEPACP_MODEL": "anthropic:claude-sonnet-4-5",
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "test",
        }
        result = run("run", "--effort", "high", "think hard", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        assert "Thought it through." in result.stdout and "Consider it." in result.stderr
        (request,) = server.model_requests()
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 24_576}
    bad = run("run", "--effort", "max", "x", cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "invalid choice: 'max'" in bad.stderr


def test_run_with_a_goal_grades_the_work_before_it_ends(tmp_path: Path) -> None:
    grade = '{{"verdict": "{}", "feedback": "{}"}}'.format
    turns = [
        {"content": "Done."},
        {"content": grade("needs_revision", "say more")},
        {"content": "Done, with more."},
        {"content": grade("satisfied", "enough said")},
    ]
    env = {"DEEPACP_HOME": str(tmp_path / "home")}
    model = write_script(tmp_path, turns)
    result = run("run", "--model", model, "--goal", "it says more", "hi", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "note: Goal needs revision (round 1 of 3): say more" in result.stdout
    assert "note: Goal met (grader, round 2 of 3): enough said" in result.stdout
    assert "Done, with more." in result.stdout


def test_run_exits_non_zero_when_the_goal_is_not_met(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[goal]\nrounds = 1\n")
    turns = [{"content": "Done."}, {"content": '{"verdict": "needs_revision", "feedback": "no"}'}]
    model = write_script(tmp_path, turns)
    env = {"DEEPACP_HOME": str(home)}
    result = run("run", "--model", model, "--goal", "it says more", "hi", cwd=tmp_path, env=env)
    assert result.returncode == 5, result.stdout  # deepacp.run.exits.GOAL_NOT_MET
    assert "[goal not met; session" in result.stdout
