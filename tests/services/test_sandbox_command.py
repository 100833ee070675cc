"""The sandbox's bwrap command line run for real: the workspace the only writable folder, the
host's tmp usable and read-only."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepacp.backends.sandbox import (
    PRIVATE_TMP_BYTES,
    Sandbox,
    SandboxSetting,
    sandbox_problem,
)
from tests.unit.backends.test_sandbox import pairs, pairs_of

needs_bwrap = pytest.mark.skipif(sandbox_problem() is not None, reason=f"{sandbox_problem()}")


@pytest.fixture
def user(monkeypatch) -> Iterator[Path]:
    """A home folder outside /tmp (which the sandbox makes private as a whole)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_bwrap
def test_the_workspace_is_the_only_writable_folder(tmp_path: Path, user: Path) -> None:
    (user / ".ssh").mkdir(parents=True)
    (user / ".netrc").write_text("machine x password y")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = Sandbox(workspace, SandboxSetting(), (workspace / ".deepacp",))
    (workspace / ".deepacp").mkdir()
    argv = sandbox.wrap(["/bin/sh", "-c", "true"], "workspace-write")
    assert argv[-4:] == ["--", "/bin/sh", "-c", "true"]
    assert ("/", "/") in pairs(argv, "--ro-bind")
    assert pairs(argv, "--bind") == [(str(workspace), str(workspace))]
    assert "--share-net" not in argv and "--unshare-all" in argv
    assert argv[argv.index("--cap-drop") : argv.index("--cap-drop") + 2] == ["--cap-drop", "ALL"]
    assert ["--size", str(PRIVATE_TMP_BYTES), "--tmpfs", "/tmp"] == argv[
        argv.index("--size") : argv.index("--size") + 4
    ]
    # $DEEPACP_HOME inside the workspace is hidden after the workspace is bound.
    assert argv.index(str(workspace / ".deepacp")) > argv.index("--bind")
    # The home is an empty read-only tmpfs: nothing under it, credentials included, shows.
    assert argv[argv.index(str(user)) - 1] == "--tmpfs" and str(user) in pairs_of(argv)
    assert not any(a.startswith(f"{user}/") for a in argv)
    read_only = sandbox.wrap(["true"], "read-only")
    assert pairs(read_only, "--bind") == [] and (str(workspace),) * 2 in pairs(
        read_only, "--ro-bind"
    )
    assert "--share-net" in sandbox.wrap(["true"], "workspace-write+network")
    assert sandbox.wrap(["true"], "off") == ["true"]


@needs_bwrap
def test_tools_under_the_hosts_tmp_stay_usable_and_read_only(
    tmp_path: Path, user: Path, monkeypatch
) -> None:
    tools = Path(tempfile.mkdtemp(dir="/tmp"))
    secret = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        tool = tools / "hello"
        tool.write_text("#!/bin/sh\necho hello from the tool\n")
        tool.chmod(0o755)
        (secret / "note").write_text("private")
        monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
        workspace = tmp_path / "ws"
        workspace.mkdir()
        sandbox = Sandbox(workspace, SandboxSetting())
        script = f"hello; cat {secret}/note; touch {tools}/planted"
        argv = sandbox.wrap(["/bin/sh", "-c", script], "workspace-write")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        assert "hello from the tool" in done.stdout
        assert "private" not in done.stdout
        assert not (tools / "planted").exists()
    finally:
        shutil.rmtree(tools, ignore_errors=True)
        shutil.rmtree(secret, ignore_errors=True)
