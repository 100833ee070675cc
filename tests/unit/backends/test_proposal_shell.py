"""Commands over a proposal: the upper layer made from the proposal, read back into it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from deepacp.backends import proposal_shell
from deepacp.backends.overlay import OverlayBackend
from deepacp.backends.proposal_shell import (
    Written,
    materialize,
    overlay_problem,
    propose,
    read_back,
)
from deepacp.backends.protocol import ShellCommand
from deepacp.backends.sandbox import SandboxSetting
from deepacp.backends.shell import LocalShellBackend

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"

needs_overlay = pytest.mark.skipif(
    overlay_problem() is not None, reason=f"no overlay here: {overlay_problem()}"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "pkg").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "old.txt").write_text("old\n")
    (root / "pkg" / "a.py").write_text("A = 1\n")
    (root / "pkg" / "b.py").write_text("B = 1\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    return root


def disk_state(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


def whiteout(path: Path) -> None:
    """What the kernel leaves in the upper layer for a deleted file: a 0/0 device."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, 0)
    except PermissionError:
        pytest.skip("making a whiteout by hand needs CAP_MKNOD")


def test_the_upper_layer_holds_the_proposed_files_and_names_the_deletions(
    tmp_path: Path,
) -> None:
    upper = tmp_path / "upper"
    upper.mkdir()
    gone = materialize(upper, {"calc.py": FIXED, "new/deep/x.py": "X = 1\n", "old.txt": None})
    assert gone == ["old.txt"]
    assert (upper / "calc.py").read_text() == FIXED
    assert (upper / "new" / "deep" / "x.py").read_text() == "X = 1\n"
    assert not (upper / "old.txt").exists()


def test_reading_back_finds_created_changed_and_deleted_files(
    workspace: Path, tmp_path: Path
) -> None:
    upper = tmp_path / "upper"
    upper.mkdir()
    proposed = {"calc.py": FIXED, "notes.md": "proposed\n"}
    materialize(upper, proposed)
    (upper / "out.txt").write_text("written\n")  # created by the command
    (upper / "calc.py").write_text(FIXED + "# more\n")  # changed again by the command
    (upper / "notes.md").unlink()  # a proposed new file the command deleted
    whiteout(upper / "old.txt")  # a file on disk the command deleted
    whiteout(upper / "pkg")  # a folder on disk the command deleted
    written = read_back(workspace, upper, proposed)
    assert written.files == {"calc.py": FIXED + "# more\n", "out.txt": "written\n"}
    assert written.gone == {"old.txt", "notes.md", "pkg", "pkg/a.py", "pkg/b.py"}


def test_a_folder_emptied_and_made_again_loses_its_old_files(
    workspace: Path, tmp_path: Path
) -> None:
    upper = tmp_path / "upper"
    (upper / "pkg").mkdir(parents=True)
    (upper / "pkg" / "a.py").write_text("A = 2\n")
    try:
        os.setxattr(upper / "pkg", "user.overlay.opaque", b"y")
    except OSError as exc:
        pytest.skip(f"no user xattrs here: {exc}")
    written = read_back(workspace, upper, {})
    assert written.files == {"pkg/a.py": "A = 2\n"}
    assert written.gone == {"pkg/b.py"}


def test_caches_and_ignored_files_are_never_read_back(workspace: Path, tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    for path in [
        "__pycache__/calc.cpython-311.pyc",
        "pkg/__pycache__/a.cpython-311.pyc",
        ".pytest_cache/v/cache/lastfailed",
        "build/lib/calc.py",
        "run.log",
        ".git/index",
        "kept.txt",
    ]:
        (upper / path).parent.mkdir(parents=True, exist_ok=True)
        (upper / path).write_text("by-product\n")
    (upper / "data.bin").write_bytes(b"\xff\xfe\x00")
    (upper / ".vscode").mkdir()
    (upper / ".vscode" / "tasks.json").write_text("{}\n")
    written = read_back(workspace, upper, {})
    assert written.files == {"kept.txt": "by-product\n"}
    assert set(written.skipped) == {"data.bin", ".vscode/tasks.json"}


async def test_what_was_read_back_joins_the_proposal(workspace: Path) -> None:
    overlay = OverlayBackend(LocalShellBackend(workspace))
    await overlay.write_text("calc.py", FIXED)
    written = Written(files={"calc.py": FIXED, "out.txt": "o\n"}, gone={"old.txt"})
    done, problems = await propose(overlay, written)
    assert (done, problems) == (["old.txt", "out.txt"], [])  # calc.py: unchanged
    assert overlay.proposed() == {"calc.py": FIXED, "old.txt": None, "out.txt": "o\n"}
    assert disk_state(workspace)["old.txt"] == "old\n" and "out.txt" not in disk_state(workspace)


async def test_a_command_that_writes_too_much_proposes_nothing_and_says_so(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proposal_shell, "MAX_PROPOSED_FILES", 2)
    overlay = OverlayBackend(LocalShellBackend(workspace))
    written = Written(files={f"f{i}.txt": "x\n" for i in range(3)})
    done, problems = await propose(overlay, written)
    assert done == [] and overlay.proposed() == {}
    assert "3 files" in problems[0] and "none proposed" in problems[0]


def sandboxed(workspace: Path) -> OverlayBackend:
    return OverlayBackend(LocalShellBackend(workspace, sandbox=SandboxSetting("read-only")))


@needs_overlay
async def test_a_command_sees_the_proposal_and_its_writes_join_it(workspace: Path) -> None:
    before = disk_state(workspace)
    overlay = sandboxed(workspace)
    await overlay.write_text("calc.py", FIXED)
    await overlay.delete("old.txt")
    assert overlay.shell is not None
    command = "python3 -c 'import calc; print(calc.add(2, 3))'; ls; "
    command += "echo hi > out.txt; rm pkg/b.py"
    result = await overlay.shell.execute(ShellCommand(command))
    assert result.exit_code == 0 and result.sandbox == "workspace-write"
    lines = result.output.splitlines()
    assert lines[0] == "5" and "old.txt" not in lines  # the proposed code, the deletion
    assert "now proposed too: out.txt, pkg/b.py" in result.output
    assert overlay.proposed() == {
        "calc.py": FIXED,
        "old.txt": None,
        "out.txt": "hi\n",
        "pkg/b.py": None,
    }
    assert disk_state(workspace) == before  # not a byte of the user's files changed


async def test_where_the_overlay_cannot_work_commands_say_they_saw_the_disk(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proposal_shell, "overlay_problem", lambda: "no overlay in this test")
    overlay = sandboxed(workspace)
    await overlay.write_text("calc.py", FIXED)
    assert overlay.shell is not None
    result = await overlay.shell.execute(ShellCommand("cat calc.py"))
    assert result.output.startswith(CALC)
    assert "ran on the files on disk, not on the proposal (no overlay in this test)" in (
        result.output
    )
    assert overlay.proposed() == {"calc.py": FIXED}
