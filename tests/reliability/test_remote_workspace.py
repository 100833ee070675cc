"""A remote workspace under attack, over a real sshd: the path-escape corpus cannot leave the
remote root, and hostile file and folder names cannot run a command on the remote."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from deepacp.backends.remote import RemoteBackend
from deepacp.backends.runners import SshRunner, parse_remote
from tests.reliability.corpus import ALL_LINKS, corpus, hostile_tree, snapshot
from tests.reliability.test_path_escape import TOOLS, refused, sample, script
from tests.support.reliability import size
from tests.support.sshd import SshServer, ssh_server  # noqa: F401  (fixture)

pytestmark = [
    pytest.mark.services,
    pytest.mark.slow(reason="every path and name of the corpus is an ssh or docker round trip"),
]

MARKER = "PWNED"
HOSTILE = [
    f"$(touch {MARKER}-a)",
    f"`touch {MARKER}-b`",
    f"x; touch {MARKER}-c",
    f"x' ; touch {MARKER}-d ; '",
    f'x" ; touch {MARKER}-e ; "',
    f"x && touch {MARKER}-f",
    f"x | touch {MARKER}-g",
    f"$(touch${{IFS}}{MARKER}-h)",
    "-rf",
    "--help",
    "a  b c",
]


async def run_tools(backend: RemoteBackend, turns: list[dict]) -> dict[str, ToolMessage]:
    from deepacp import create_deep_agent
    from deepacp.testing import ScriptedChatModel

    agent = create_deep_agent(ScriptedChatModel(turns=turns), backend=backend)
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


async def connect(server: SshServer, root: Path) -> RemoteBackend:
    target = parse_remote(server.url(root))
    return await RemoteBackend.connect(target, SshRunner(target, str(server.config)))


async def test_the_escape_corpus_stays_in_the_remote_root(
    ssh_server: SshServer,  # noqa: F811
    tally,
    tmp_path: Path,
) -> None:
    workspace, outside, home = hostile_tree(tmp_path)
    before = snapshot(tmp_path, workspace)
    links = [p for p in corpus() if any(p == k or p.startswith(k + "/") for k in ALL_LINKS)]
    chosen = list(dict.fromkeys(links + sample(corpus(), size(30, 400))))
    paths = [p.format(workspace=workspace, outside=outside, home=home) for p in chosen]
    backend = await connect(ssh_server, workspace)
    try:
        results = await run_tools(backend, script(paths))
    finally:
        await backend.close()
    t = tally("path escape: remote backend over ssh")
    for name in TOOLS:
        for i, path in enumerate(paths):
            message = results[f"{name}-{i}"]
            ok = refused(name, path, message.status, str(message.content))
            t.record(ok, f"{name}({path[:80]!r}): {str(message.content)[:120]!r}")
    t.record(snapshot(tmp_path, workspace) == before, "files outside the workspace unchanged")
    t.record(sorted(os.listdir(outside)) == ["secret.txt"], "nothing created outside")
    t.check()


async def test_hostile_names_cannot_run_a_command_on_the_remote(
    ssh_server: SshServer,  # noqa: F811
    tally,
    tmp_path: Path,
) -> None:
    root = tmp_path / f"repo $(touch {MARKER}-root) 'q'"
    root.mkdir()
    for name in HOSTILE:
        (root / f"{name}.txt").write_text(f"{name}\n")
        (root / name).mkdir()
    calls = []
    for i, name in enumerate(HOSTILE):
        calls += [
            {"id": f"read-{i}", "name": "read_file", "args": {"file_path": f"{name}.txt"}},
            {"id": f"ls-{i}", "name": "ls", "args": {"path": name}},
            {
                "id": f"write-{i}",
                "name": "write_file",
                "args": {"file_path": f"{name}/new", "content": name},
            },
            {
                "id": f"edit-{i}",
                "name": "edit_file",
                "args": {"file_path": f"{name}.txt", "old_string": name, "new_string": "ok"},
            },
            {"id": f"grep-{i}", "name": "grep", "args": {"pattern": name, "path": name}},
            {"id": f"glob-{i}", "name": "glob", "args": {"pattern": f"{name}*"}},
        ]
    listing = {"id": "run", "name": "execute", "args": {"command": "ls -A"}}
    turns = [{"tool_calls": calls}, {"tool_calls": [listing]}, {"content": "done"}]
    backend = await connect(ssh_server, root)
    try:
        results = await run_tools(backend, turns)
    finally:
        await backend.close()
    t = tally("command injection: remote names")
    for i, name in enumerate(HOSTILE):
        for op in ("read", "ls", "write", "edit", "grep", "glob"):
            message = results[f"{op}-{i}"]
            t.record(message.status != "error", f"{op}({name!r}): {str(message.content)[:120]}")
        t.record((root / name / "new").read_text() == name, f"wrote into {name!r}")
        t.record((root / f"{name}.txt").read_text() == "ok\n", f"edited {name!r}.txt")
    t.record(f"{HOSTILE[0]}.txt" in str(results["run"].content), "the command ran in the root")
    planted = [str(p) for p in tmp_path.rglob(f"{MARKER}*")]
    planted += [str(p) for p in Path.home().glob(f"{MARKER}*")]
    planted += [str(p) for p in Path("/").glob(f"{MARKER}*")]
    t.record(not planted, f"a name ran a command: {planted}")
    t.check()
