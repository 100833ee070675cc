"""Restore points in the LSP face: a command over the proposal leaves the disk as it is, so
no scan runs around it; one that runs on the disk is scanned as anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepacp.backends import proposal_shell
from deepacp.backends.overlay import OverlayBackend
from deepacp.backends.proposal_shell import overlay_problem
from deepacp.backends.protocol import ShellCommand
from deepacp.backends.sandbox import SandboxPolicy, SandboxSetting
from deepacp.backends.shell import LocalShellBackend
from deepacp.session.restore import RecordingBackend, RestorePoints


def recorded(
    tmp_path: Path, policy: SandboxPolicy = "read-only"
) -> tuple[RecordingBackend, RestorePoints, Path]:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "calc.py").write_text("A = 1\n")
    overlay = OverlayBackend(LocalShellBackend(root, sandbox=SandboxSetting(policy)))
    points = RestorePoints(tmp_path / "home", "s", root)
    points.begin("run", "thread", None)
    return RecordingBackend(overlay, points), points, root


@pytest.mark.skipif(overlay_problem() is not None, reason=f"no overlay: {overlay_problem()}")
async def test_a_command_over_the_proposal_is_not_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend, points, root = recorded(tmp_path)

    def scanned() -> None:
        raise AssertionError("the workspace was scanned")

    monkeypatch.setattr(points, "before_command", scanned)
    assert backend.shell is not None
    result = await backend.shell.execute(ShellCommand("echo hi > out.txt"))
    assert "now proposed too: out.txt" in result.output
    assert not (root / "out.txt").exists()


@pytest.mark.parametrize("outside", [False, True])
async def test_a_command_that_runs_on_the_disk_is_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: bool
) -> None:
    if not outside:
        monkeypatch.setattr(proposal_shell, "overlay_problem", lambda: "no overlay in this test")
    backend, points, root = recorded(tmp_path, "workspace-write")
    assert backend.shell is not None
    await backend.shell.execute(ShellCommand("echo hi > out.txt", outside_sandbox=outside))
    assert (root / "out.txt").read_text() == "hi\n"
    assert points.points[0].before == {"out.txt": None}
