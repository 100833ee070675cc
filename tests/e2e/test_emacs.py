"""A real editor: batch Emacs runs the shipped deepacp.el with eglot against `deepacp lsp`.

Each test runs one scenario of tests/e2e/emacs_accept.el on two Emacsen where present: the
system's (Debian bookworm's 28, with eglot from ELPA: `elpa-eglot`) and Emacs 30 from
Debian's bookworm-backports, which `.ci/emacs30` unpacks beside it (`.ci/run` calls it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.editors import with_eglot

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PATH = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
EMACS30 = (
    Path(
        os.environ.get("DEEPACP_EMACS30_HOME")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepacp" / "emacs-30"
    )
    / "bin"
    / "emacs"
)


EMACSEN = {
    "system": ("emacs", "Emacs with eglot is not installed (.ci/run installs it)"),
    "emacs30": (str(EMACS30), "Emacs 30 is not unpacked (.ci/emacs30 does it)"),
}
"""Each Emacs a test runs on: the command, and why it is skipped where it cannot run."""


@pytest.fixture(params=list(EMACSEN))
def emacs(request: pytest.FixtureRequest) -> str:
    """The Emacs of this parameter, if it is here and loads eglot; else the test skips."""
    command, missing = EMACSEN[request.param]
    found = with_eglot(shutil.which(command))
    if found is None:
        pytest.skip(missing)
    return found


DISK = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def edit(call_id: str, path: str, old: str, new: str) -> dict:
    args = {"file_path": path, "old_string": old, "new_string": new}
    return {"tool_calls": [{"id": call_id, "name": "edit_file", "args": args}]}


def run(emacs: str, scenario: str, tmp_path: Path, turns: list[dict], **env: str) -> dict:
    """Run `scenario` in batch Emacs with the scripted model playing `turns`; its report."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    result = tmp_path / "result.txt"
    completed = subprocess.run(
        [emacs, "--batch", "-q", "-l", str(ROOT / "tests" / "e2e" / "emacs_accept.el")],
        cwd=tmp_path,
        env={
            **os.environ,
            "PATH": PATH,
            "DEEPACP_HOME": str(tmp_path / "home"),
            "DEEPACP_MODEL": f"scripted:{script}",
            "DEEPACP_EMACS_SNIPPET": str(ROOT / "editors" / "emacs" / "deepacp.el"),
            "DEEPACP_TEST_SCENARIO": scenario,
            "DEEPACP_TEST_RESULT": str(result),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=180,
    )
    outcome = result.read_text() if result.exists() else f"no result: {completed.stderr[-3000:]}"
    assert outcome.startswith("OK "), outcome
    return json.loads(outcome.removeprefix("OK "))


def test_accepting_applies_the_change_or_leaves_it_pending(emacs: str, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)  # a project for eglot
    (root / "calc.py").write_text(DISK)
    turns = [
        edit("a", "calc.py", "return a + b", "return b + a"),
        edit("s", "calc.py", "return a - b", "return a - b  # checked"),
        {
            "tool_calls": [
                {
                    "id": "n",
                    "name": "write_file",
                    "args": {"file_path": "new.py", "content": "NEW = 1\n"},
                }
            ]
        },
        {"content": "Tidied calc and added new.py."},
    ]
    report = run(emacs, "review", tmp_path, turns, DEEPACP_TEST_ROOT=str(root))
    # "Accept this hunk" from the code-action menu puts the hunk into the buffer.
    assert "deepacp: Accept this hunk" in report["offered"]
    assert report["after_hunk"] == DISK.replace("a + b", "b + a")
    assert report["hunk_message"] is None
    # deepacp-accept asks; "n" applies nothing, and the server says so once.
    assert report["after_decline"] == report["after_hunk"]
    assert report["declined"].endswith(
        "deepacp: nothing accepted; the editor did not apply calc.py (declined in Emacs); "
        "new.py (new) (declined in Emacs)"
    )
    # "y" applies both files, the new one into an unsaved buffer; saving writes them.
    assert report["accepted"].endswith(
        "deepacp: accepted into the editor, not saved yet: calc.py, new.py (new)"
    )
    assert report["asked"][-2:] == [
        "deepacp: accept proposal: apply 1 change to calc.py? ",
        "deepacp: accept proposal: apply 1 change to new.py? ",
    ]
    assert (root / "calc.py").read_text() == DISK.replace("a + b", "b + a").replace(
        "a - b", "a - b  # checked"
    )
    assert (root / "new.py").read_text() == "NEW = 1\n"
