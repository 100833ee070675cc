"""Attacks on what the sandbox shows of the host besides the workspace, through
`deepacp --stdio` in accept-edits, where `workspace-write` commands run without asking: a
command may not reach the home folder (but for its toolchains and caches, read-only), a
unix socket of another program, or the agent variables; a folder on `PATH` that cannot be
read breaks nothing. As root and as an ordinary user (tests/support/users.py).

Skipped, with the reason, where bubblewrap is missing or cannot create namespaces."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability import test_sandbox
from tests.reliability.test_sandbox import Host, card_text, execute, hosted
from tests.support.users import Runner

pytestmark = test_sandbox.pytestmark  # services, skipped where there is no sandbox

CANARY = "home-canary"
GIT_CANARY = f"{CANARY}-git-credentials-51c3"
FILE_CANARY = f"{CANARY}-secret-txt-8e0a"
CARGO_CANARY = f"{CANARY}-cargo-token-d27f"
CONNECT = (
    "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
    "print('connected')"
)


@pytest.fixture
def host(runner: Runner) -> Iterator[Host]:
    with hosted(runner) as made:
        yield made


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


class Listeners:
    """Unix sockets other programs listen on, open to anyone (mode 0666): what reached
    each."""

    def __init__(self) -> None:
        self.reached: dict[str, int] = {}
        self.servers: list[asyncio.Server] = []

    async def listen(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.reached[str(path)] = 0

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.reached[str(path)] += 1
            writer.close()

        self.servers.append(await asyncio.start_unix_server(accept, path=str(path)))
        path.chmod(0o666)
        return path

    def close(self) -> None:
        for server in self.servers:
            server.close()


async def test_an_unasked_command_reaches_nothing_of_the_home_but_its_toolchains(
    tally, host: Host
) -> None:
    t = tally("sandbox: the home folder, sockets and agents")
    home = host.user
    workspace = home / "src" / "project"
    workspace.mkdir(parents=True)
    write(home / ".config" / "git" / "credentials", f"https://u:{GIT_CANARY}@example.com\n")
    write(home / "secret.txt", FILE_CANARY)
    write(home / ".cargo" / "credentials.toml", f'[registry]\ntoken = "{CARGO_CANARY}"\n')
    rustc = write(home / ".rustup/toolchains/stable/bin/rustc", "#!/bin/sh\necho rustc-ok\n", 0o755)
    write(home / ".cargo/bin/cargo", f'#!/bin/sh\nexec "{rustc}"\n', 0o755)
    sockets = Listeners()
    docker = await sockets.listen(home / ".rd" / "docker.sock")
    agent = await sockets.listen(home / ".password-manager" / "ssh-agent.sock")
    beside = await sockets.listen(host.beside / "api.sock")
    env = {
        **host.env,
        "SSH_AUTH_SOCK": str(agent),
        "DOCKER_HOST": f"unix://{docker}",
        "PATH": f"{home / '.cargo' / 'bin'}:{os.environ['PATH']}",
    }
    connect = f'{host.python} -c "{CONNECT}"'
    calls = [
        execute("docker", f"{connect} {docker}"),
        execute("agent", f'echo agent=${{SSH_AUTH_SOCK:-unset}}; {connect} "{agent}"'),
        execute("beside", f"{connect} {beside}"),
        execute("read", "cat ~/.config/git/credentials ~/secret.txt ~/.cargo/credentials.toml"),
        execute("grep", f"grep -rs {CANARY} ~; ls -a ~"),
        execute("env", "env | grep -E '^(SSH_AUTH_SOCK|DOCKER_HOST)=' ; echo env-listed"),
        execute("build", "cargo && pwd && echo built > built.txt"),
        execute("write-home", "echo x > ~/pwned"),
    ]
    turns = [{"tool_calls": calls}, {"content": "done"}]
    try:
        async with host.start(turns, workspace=workspace, env=env) as started:
            session = await started.new_session()
            await started.conn.set_session_mode(session_id=session, mode_id="accept-edits")
            await started.prompt(session, "go")
            texts = {c["id"]: card_text(started.client.cards()[c["id"]]) for c in calls}
            t.record(started.client.permission_requests == [], "a command was asked")
    finally:
        sockets.close()
    for path, count in sockets.reached.items():
        t.record(count == 0, f"{path} was reached {count} times")
    for name in ("docker", "agent", "beside"):
        t.record("connected" not in texts[name], f"{name}: {texts[name]}")
    everything = "\n".join(texts.values()) + "\n".join(map(str, host.requests()))
    for canary in (GIT_CANARY, FILE_CANARY, CARGO_CANARY):
        t.record(canary not in everything, f"{canary} was read")
    t.record("agent=unset" in texts["agent"], f"agent: {texts['agent']}")
    for name in ("SSH_AUTH_SOCK=", "DOCKER_HOST="):
        t.record(name not in texts["env"], f"env: {texts['env']}")
    t.record("rustc-ok" in texts["build"], f"no toolchain: {texts['build']}")
    t.record(str(workspace) in texts["build"], f"the workspace moved: {texts['build']}")
    t.record((workspace / "built.txt").exists(), "the build wrote nothing")
    t.record(not (home / "pwned").exists(), "the home was written")
    t.record("Read-only file system" in texts["write-home"], texts["write-home"])
    t.check()


async def test_a_folder_on_path_the_user_cannot_read_breaks_no_command(
    tally, host: Host, runner: Runner
) -> None:
    """As `sudo -E` leaves it: another user's 0700 home on `PATH`."""
    if runner.uid == 0:
        pytest.skip("root reads every folder: this runs as the ordinary user")
    t = tally("sandbox: an unreadable PATH folder")
    locked = Path(tempfile.mkdtemp(prefix="deepacp-locked-", dir="/var/tmp"))
    try:
        (locked / "bin").mkdir()
        if runner.uid == os.geteuid():  # we are the user: lock it from ourselves
            locked.chmod(0o000)
        env = {**host.env, "PATH": f"{locked / 'bin'}:{os.environ['PATH']}"}
        calls = [execute("echo", "echo still-works"), execute("ls", "ls / > listed.txt")]
        turns = [{"tool_calls": calls}, {"content": "done"}]
        async with host.start(turns, env=env) as started:
            session = await started.new_session()
            await started.conn.set_session_mode(session_id=session, mode_id="accept-edits")
            await started.prompt(session, "go")
            texts = {c["id"]: card_text(started.client.cards()[c["id"]]) for c in calls}
        t.record("still-works" in texts["echo"], f"echo: {texts['echo']}")
        for name, text in texts.items():
            t.record("[exit code 0] [sandbox: workspace-write]" in text, f"{name}: {text}")
        t.record((host.workspace / "listed.txt").exists(), "ls wrote nothing")
    finally:
        locked.chmod(0o700)
        shutil.rmtree(locked, ignore_errors=True)
    t.check()
