"""Attacks from a command of the LSP face, which runs over an overlay of the workspace:
through `deepacp lsp` (a scripted model calling `execute`), nothing may reach the real
workspace or anything outside it; what lands in the overlay is only proposed. `deepacp lsp`
runs as root and as an ordinary user (`runner`), who owns the workspace.

Skipped, with the reason, where the kernel overlay or the sandbox cannot work here (or
for the ordinary user)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pytest_lsp import ClientServerConfig, LanguageClient

from deepacp.backends.proposal_shell import overlay_problem
from tests.inprocess.lsp_face import test_lsp
from tests.inprocess.lsp_face.test_lsp import execute, open_document, start
from tests.support.folders import var_tmp
from tests.support.users import Runner

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(
        overlay_problem() is not None, reason=f"no overlay here: {overlay_problem()}"
    ),
]

CALC = "def add(a, b):\n    return a + b\n"
OVERLAY_PROBE = (
    "from deepacp.backends.proposal_shell import overlay_problem; print(overlay_problem() or '')"
)


@pytest.fixture
def base() -> Iterator[Path]:
    """Under /var/tmp, not /tmp: the sandbox's /tmp is private, which would hide a target
    for a reason a real folder does not have."""
    with var_tmp("deepacp-overlay-attack-", 0o755) as folder:
        yield folder


@pytest.fixture(params=test_lsp.CLIENTS)
async def client(request, runner: Runner, base: Path) -> AsyncIterator[LanguageClient]:
    """pytest-lsp's client (as tests/e2e/test_lsp.py's) of `deepacp lsp` run as `runner`,
    with a home and a $DEEPACP_HOME of its own in `base`."""
    if runner.prefix:  # the module's skip asked for root, or for the suite's own user
        probe = [runner.python, "-c", OVERLAY_PROBE]
        done = runner.run(probe, capture_output=True, text=True, cwd="/")
        assert done.returncode == 0, f"overlay_problem() failed for {runner.name}: {done.stderr}"
        if problem := done.stdout.strip():
            pytest.skip(f"no overlay for {runner.name}: {problem}")
    home, deepacp_home = base / "user", base / "home"
    home.mkdir()
    deepacp_home.mkdir()
    runner.own(base)
    env = {**os.environ, "HOME": str(home), "DEEPACP_HOME": str(deepacp_home), "DEEPACP_MODEL": ""}
    config = ClientServerConfig(list(runner.deepacp("lsp")), test_lsp.make_client, env)
    lsp_client = await config.start()
    lsp_client.client_name = request.param
    try:
        yield lsp_client
    finally:
        await lsp_client.shutdown_session()
        await lsp_client.stop()


def run(call_id: str, command: str) -> dict:
    return {"id": call_id, "name": "execute", "args": {"command": command}}


async def test_a_command_over_the_proposal_writes_neither_the_workspace_nor_outside(
    client: LanguageClient, runner: Runner, base: Path
) -> None:
    workspace = base / "workspace"
    beside = base / "beside"
    workspace.mkdir()
    beside.mkdir()
    (workspace / "calc.py").write_text(CALC)
    runner.own(base)
    every_mount = (
        "for m in $(cut -d' ' -f5 /proc/self/mountinfo); do echo x > \"$m/via-mount\"; done"
    )
    calls = [
        run("absolute", f"echo pwned > {workspace}/calc.py"),
        run("beside", f"echo x > {beside}/pwned"),
        run("dotdot", "echo x > ../beside/dotdot"),
        run("symlink", f"ln -s {beside} out && echo x > out/via-link"),
        run("proc-root", f"echo x > /proc/self/root{beside}/via-proc"),
        run("unmount", f"umount -l {workspace}; echo x > {workspace}/under-the-overlay"),
        run("remount", f"mount -o remount,rw / ; echo x > {beside}/via-remount"),
        run("mounts", every_mount),
    ]
    turns = [{"tool_calls": calls}, {"content": "done"}]
    await start(client, workspace, turns, shell="allow")
    uri = open_document(client, workspace / "calc.py", CALC)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "attack"})
    assert (workspace / "calc.py").read_text() == CALC
    assert sorted(p.name for p in workspace.iterdir()) == ["calc.py"]
    assert list(beside.iterdir()) == []
    assert not any(base.parent.glob("via-mount")) and not Path("/via-mount").exists()
    # What the commands wrote in the overlay is offered for review, and only that.
    proposed = {Path(u).name for u in result["files"]}
    assert "calc.py" in proposed and "out" not in proposed  # a link is never proposed
    assert proposed <= {"calc.py", "under-the-overlay", "via-mount"}
