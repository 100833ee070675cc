"""`deepacp run --profile` as a user runs it: the compact profile reaches the model, and a
name that is no profile is one line naming the ones there are, before anything runs."""

import json
import os
import subprocess
from pathlib import Path

from tests.support.cli import deepacp


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    script, record = tmp_path / "script.json", tmp_path / "requests.jsonl"
    script.write_text(json.dumps({"turns": [{"content": "Hello."}], "record": str(record)}))
    env = {**os.environ, "DEEPACP_HOME": str(tmp_path / "home")}
    return deepacp("run", "--model", f"scripted:{script}", *args, "hi", cwd=tmp_path, env=env)


def test_run_with_the_compact_profile(tmp_path: Path) -> None:
    result = run(tmp_path, "--profile", "small-local")
    assert result.returncode == 0, result.stderr
    (request,) = [
        json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()
    ]
    assert not {"write_todos", "task", "start_background_task", "glob"} & set(request["tools"])
    assert "read_file" in request["tools"]


def test_run_with_an_unknown_profile(tmp_path: Path) -> None:
    result = run(tmp_path, "--profile", "small")
    assert result.returncode == 2
    assert result.stderr == (
        "deepacp: --profile: unknown profile 'small' (did you mean 'small-local'?); "
        "choose auto, default, small-local\n"
    )
    assert not (tmp_path / "requests.jsonl").exists()
