"""Attacks on the command sandbox, through the real agent path: a scripted model calls
`execute` over `deepacp --stdio`, and the host is checked afterwards. Each attack must
fail from inside the sandbox; builds and tests that only touch the workspace must work.

Skipped, with the reason, where bubblewrap is missing or cannot create namespaces."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import schema as S

from deepacp.backends.sandbox import sandbox_problem
from tests.support.acp import start_agent
from tests.support.folders import var_tmp
from tests.support.turns import pytest_command
from tests.support.users import Runner
from tests.support.waits import marked, marked_pids, wait_for

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(
        sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}"
    ),
]

SSH_CANARY = "ssh-canary-4f1d9a0c"
HOME_CANARY = "deepacp-home-canary-7b2e"
AWS_CANARY = "aws-canary-90c1"


def execute(call_id: str, command: str, **args: Any) -> dict:
    return {"id": call_id, "name": "execute", "args": {"command": command, **args}}


def card_text(card: dict) -> str:
    parts = []
    for item in card.get("content") or []:
        block = getattr(item, "content", None)
        if isinstance(block, S.TextContentBlock):
            parts.append(block.text)
    return "\n".join(parts)


class Host:
    """A fake user on the host: a home with credentials, a $DEEPACP_HOME with a canary,
    the workspace and a folder beside it, all the `runner`'s (who runs `deepacp`). All
    under /var/tmp, not /tmp: the sandbox's /tmp is private, which would hide them for a
    reason a real home does not have."""

    def __init__(self, base: Path, runner: Runner) -> None:
        self.base = base
        self.runner = runner
        self.python = runner.python
        self.workspace = base / "workspace"
        self.workspace.mkdir()
        self.user = base / "user"
        (self.user / ".ssh").mkdir(parents=True)
        (self.user / ".ssh" / "id_rsa").write_text(SSH_CANARY)
        (self.user / ".aws").mkdir()
        (self.user / ".aws" / "credentials").write_text(AWS_CANARY)
        self.home = base / "home"
        self.home.mkdir()
        (self.home / "canary.txt").write_text(HOME_CANARY)
        self.beside = base / "beside"
        self.beside.mkdir()
        self.tag = uuid.uuid4().hex[:12]

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.user)}

    def start(self, turns: list[dict], *, args: tuple = (), **kwargs: Any):
        """`deepacp --stdio *args` started as the runner, over everything here made its."""
        folder = self.base / "agent"
        folder.mkdir(exist_ok=True)
        self.runner.own(self.base)
        kwargs = {"home": self.home, "workspace": self.workspace, "env": self.env, **kwargs}
        return start_agent(folder, turns, command=self.runner.deepacp("--stdio", *args), **kwargs)

    def requests(self) -> list[dict]:
        """What the scripted model received."""
        path = self.base / "agent" / "requests.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def set_sandbox(agent, session: str, policy: str) -> Any:
    """Set `session`'s sandbox policy (its config option `sandbox`) to `policy`."""
    return await agent.conn.set_config_option(config_id="sandbox", session_id=session, value=policy)


@contextlib.contextmanager
def hosted(runner: Runner) -> Iterator[Host]:
    """A `Host` whose `deepacp` runs as `runner`, removed afterwards."""
    with var_tmp("deepacp-sandbox-", 0o755) as base:
        yield Host(base, runner)


@pytest.fixture
def host(runner: Runner) -> Iterator[Host]:
    with hosted(runner) as made:
        yield made


async def run_commands(
    host: Host, calls: list[dict], *, mode: str = "yolo", args: tuple = ()
) -> tuple[Any, dict[str, str]]:
    """Run `calls` in one model message; the agent and each call's card text."""
    turns = [{"tool_calls": calls}, {"content": "done"}]
    async with host.start(turns, args=args) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id=mode)
        await agent.prompt(session, "go")
        cards = agent.client.cards()
        return agent, {call["id"]: card_text(cards.get(call["id"], {})) for call in calls}


async def test_writes_outside_the_workspace_fail(tally, host: Host) -> None:
    t = tally("sandbox: writes outside the workspace")
    etc = Path("/etc") / f"deepacp-{host.tag}"
    host_tmp = Path("/tmp") / f"deepacp-{host.tag}"
    targets = {
        "home": host.user / "pwned",
        "etc": etc,
        "host-tmp": host_tmp,
        "beside": host.beside / "pwned",
        "deepacp-home": host.home / "pwned",
    }
    calls = [execute(name, f"echo x > {path}") for name, path in targets.items()]
    calls += [
        execute("dotdot", "cd .. && echo x > beside/dotdot; echo x > $PWD/../beside/dotdot2"),
        execute("symlink", f"ln -s {host.beside} out && echo x > out/via-link"),
        execute("etc-link", f"ln -s /etc etc-link && echo x > etc-link/deepacp-{host.tag}"),
        execute("proc-root", f"echo x > /proc/self/root{host.beside}/via-proc"),
        execute("proc-1-root", f"echo x > /proc/1/root{host.beside}/via-proc1"),
        execute("setuid-su", f"su root -c 'echo x > {host.beside}/via-su'"),
        execute(
            "setuid-mount",
            f"mount --bind {host.base} /mnt; mount -o remount,rw,bind {host.beside}; "
            f"echo x > {host.beside}/via-mount",
        ),
        execute("inside", "echo kept > made-inside.txt"),
    ]
    agent, texts = await run_commands(host, calls)
    try:
        for name, path in targets.items():
            t.record(not path.exists(), f"{name}: {path} was written")
        for name in ("dotdot", "dotdot2", "via-link", "via-proc", "via-proc1", "via-su"):
            t.record(not (host.beside / name).exists(), f"{name} escaped")
        t.record(not (host.beside / "via-mount").exists(), "a setuid mount escaped")
        t.record(not etc.exists(), "a link to /etc escaped")
        t.record((agent.workspace / "made-inside.txt").read_text() == "kept\n", "no write inside")
        t.record("[sandbox: workspace-write]" in texts["inside"], f"card: {texts['inside']}")
        t.record("Read-only file system" in texts["home"], f"home: {texts['home']}")
        t.record("outside_sandbox=true" in texts["etc"], f"no sandbox hint: {texts['etc']}")
    finally:
        for path in (etc, host_tmp):
            path.unlink(missing_ok=True)
    t.check()


async def test_credentials_and_deepacp_home_are_not_visible(tally, host: Host) -> None:
    t = tally("sandbox: credentials hidden")
    calls = [
        execute("ssh", "cat ~/.ssh/id_rsa; ls -a ~/.ssh"),
        execute("aws", "cat $HOME/.aws/credentials"),
        execute("home", f"cat {host.home}/canary.txt; ls -a {host.home}"),
        execute("grep", f"grep -r canary {host.user} {host.home} 2>&1; true"),
        execute("link", f"ln -s {host.user}/.ssh keys && cat keys/id_rsa"),
        execute("proc", f"cat /proc/1/root{host.user}/.ssh/id_rsa"),
    ]
    _, texts = await run_commands(host, calls)
    everything = "\n".join(texts.values()) + "\n".join(map(str, host.requests()))
    for canary in (SSH_CANARY, AWS_CANARY, HOME_CANARY):
        t.record(canary not in everything, f"{canary} was read")
    t.record(all(texts[c["id"]] for c in calls), f"a card is empty: {texts}")
    t.check()


async def test_no_network_reaches_a_local_listener(tally, host: Host) -> None:
    t = tally("sandbox: network off")
    connections: list[int] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), 5); print('in')"
    calls = [
        execute("python", f'{host.python} -c "{probe}"'),
        execute("bash-tcp", f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"),
    ]
    async with server:
        _, texts = await run_commands(host, calls)
        t.record(connections == [], f"{len(connections)} connections reached the listener")
        t.record("outside_sandbox=true" in texts["python"], f"no hint: {texts['python']}")
        _, texts = await run_commands(
            host, calls[:1], args=("--sandbox", "workspace-write+network")
        )
        t.record(connections == [1], "workspace-write+network did not connect")
        t.record("[sandbox: workspace-write+network]" in texts["python"], texts["python"])
    t.check()


async def test_the_disk_outside_cannot_be_filled(tally, host: Host) -> None:
    t = tally("sandbox: disk outside the workspace")
    host_tmp, var_tmp = Path(f"/tmp/fill-{host.tag}"), Path(f"/var/tmp/fill-{host.tag}")
    calls = [
        execute("tmp", f"fallocate -l 4G {host_tmp}"),
        execute("home", "dd if=/dev/zero of=$HOME/fill bs=1M count=4"),
        execute("var-tmp", f"dd if=/dev/zero of={var_tmp} bs=1M count=4"),
    ]
    try:
        _, texts = await run_commands(host, calls)
        t.record("No space left on device" in texts["tmp"], f"private /tmp: {texts['tmp']}")
        t.record(not (host.user / "fill").exists(), "filled the home folder")
        t.record(not var_tmp.exists(), "filled /var/tmp")
        t.record(not host_tmp.exists(), "filled the host's /tmp")
    finally:
        host_tmp.unlink(missing_ok=True)
        var_tmp.unlink(missing_ok=True)
    t.check()


async def test_cancel_leaves_no_process_behind(tally, host: Host) -> None:
    t = tally("sandbox: cancel kills the tree")
    mark = uuid.uuid4().hex
    daemon = "setsid sh -c 'sleep 300' & nohup sleep 300 >/dev/null 2>&1 & (sleep 300 &)"
    turns = [{"tool_calls": [execute("c", marked(f"{daemon}; sleep 300", mark))]}]
    async with host.start(turns) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        turn = asyncio.create_task(agent.prompt(session, "go"))
        await wait_for(lambda: len(marked_pids(mark)) >= 4, 20)
        await agent.conn.cancel(session_id=session)
        response = await turn
        t.record(response.stop_reason == "cancelled", f"stop: {response.stop_reason}")
        try:
            await wait_for(lambda: not marked_pids(mark), 5)
        except AssertionError:
            t.record(False, f"left behind: {marked_pids(mark)}")
    t.check()


FIXTURE = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "package.json": '{"name": "fixture", "version": "1.0.0", "scripts": {"test": "node t.js"}}',
    "t.js": "require('assert').strictEqual(2 + 3, 5); console.log('node ok');\n",
}


async def test_builds_and_tests_inside_the_workspace_work(tally, host: Host) -> None:
    t = tally("sandbox: work inside the workspace")
    calls = [
        execute("pytest", pytest_command(host.python)),
        execute("git", "git add calc.py && git status --short"),
    ]
    if shutil.which("npm"):
        calls.append(execute("npm", "npm test"))
    workspace = host.workspace
    for name, text in FIXTURE.items():
        (workspace / name).write_text(text)
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(workspace)], check=True)
    _, texts = await run_commands(host, calls, mode="accept-edits")
    t.record("1 passed" in texts["pytest"], f"pytest: {texts['pytest']}")
    t.record("A  calc.py" in texts["git"], f"git: {texts['git']}")
    t.record((workspace / ".git" / "index").exists(), "git wrote nothing")
    if "npm" in texts:
        t.record("node ok" in texts["npm"], f"npm: {texts['npm']}")
    for name, text in texts.items():
        t.record("[exit code 0] [sandbox: workspace-write]" in text, f"{name}: {text}")
    t.check()
