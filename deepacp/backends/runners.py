"""Runners: how a remote workspace's programs reach its machine — `ssh HOST` or `docker exec
CONTAINER` — and the URLs that name one (`ssh://[user@]host[:port]/path`,
`docker://container/path`).

A runner turns a program and its arguments into the local command that runs them there;
every argument arrives there as one word, whatever it holds (ssh's remote side parses
one command line, so each word is quoted for a POSIX shell; docker passes them as they are).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import unquote, urlsplit

from deepacp.backends.programs import trusted_program
from deepacp.backends.shell import lifeline, watched
from deepacp.errors import RemoteUnavailable

SSH_CONFIG_ENV = "DEEPACP_SSH_CONFIG"
"""An ssh_config file used instead of ~/.ssh/config (`ssh -F`)."""
CONNECT_TIMEOUT = 15
"""Seconds ssh may take to connect and log in."""


@dataclass(frozen=True)
class RemoteTarget:
    """A remote workspace: the machine (or container) and the checkout's path on it."""

    scheme: Literal["ssh", "docker"]
    host: str
    """The ssh host (a name or address, or an ssh_config alias) or the container."""
    root: str
    """The checkout's absolute path there."""
    user: str | None = None
    port: int | None = None

    def __str__(self) -> str:
        login = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{login}{self.host}{port}{self.root}"


def parse_remote(url: str) -> RemoteTarget:
    """The target `url` names, or `RemoteUnavailable` saying what is wrong with it."""
    usage = "use ssh://[user@]host[:port]/path/to/repo or docker://container/path/to/repo"
    parts = urlsplit(url)
    if parts.scheme not in ("ssh", "docker"):
        raise RemoteUnavailable(f"{url!r} is not a remote workspace URL: {usage}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise RemoteUnavailable(f"{url!r} has a bad port: {usage}") from None
    root = unquote(parts.path)
    if not host or host.startswith("-") or not root.startswith("/"):
        raise RemoteUnavailable(f"{url!r} names no host and absolute path: {usage}")
    if parts.query or parts.fragment or parts.password is not None or "\0" in root:
        raise RemoteUnavailable(f"{url!r} has parts a remote workspace does not take: {usage}")
    user = unquote(parts.username) if parts.username else None
    if parts.scheme == "docker" and (user or port):
        raise RemoteUnavailable(f"{url!r}: a docker URL takes no user or port: {usage}")
    if user is not None and (user.startswith("-") or not user.strip()):
        raise RemoteUnavailable(f"{url!r} has a bad user name: {usage}")
    root = "/" + root.strip("/") if root.strip("/") else "/"
    return RemoteTarget(parts.scheme, host, root, user, port)  # type: ignore[arg-type]


class Runner(Protocol):
    """Runs programs on one remote machine."""

    target: RemoteTarget

    def argv(self, program: Sequence[str]) -> list[str]:
        """The local command that runs `program` (its name, then its arguments) there."""
        ...

    async def connect(self) -> None:
        """Make sure the machine can be reached (`RemoteUnavailable` says why not)."""
        ...

    async def close(self) -> None: ...


async def _output(argv: Sequence[str]) -> tuple[int, str]:
    """Run `argv` locally to its end; its exit code and what it said on stderr."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, said = await proc.communicate()
    return proc.returncode or 0, said.decode("utf-8", "replace")


def client(name: str) -> str:
    """The local `name` (ssh, docker) to run: never one a command could have planted
    (`trusted_program`); `RemoteUnavailable` when there is none."""
    found = trusted_program(name)
    if found is None:
        raise RemoteUnavailable(
            f"{name} is not installed here (none on PATH outside the workspaces that only "
            "root or you can change)"
        )
    return found


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no reason given"


class SshRunner:
    """`ssh HOST`, in batch mode (never a prompt) over one master connection — a child of
    this process, its socket in a private temporary folder — so an operation does not pay
    for a new login."""

    def __init__(self, target: RemoteTarget, config: str | None = None) -> None:
        self.target = target
        self.config = config if config is not None else os.environ.get(SSH_CONFIG_ENV)
        self._folder = Path(tempfile.mkdtemp(prefix="deepacp-ssh-"))  # 0700
        self.control = self._folder / "master"
        self._master: asyncio.subprocess.Process | None = None

    def _options(self) -> list[str]:
        options = ["-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}"]
        options += ["-o", f"ControlPath={self.control}"]
        if self.config:
            options += ["-F", self.config]
        if self.target.port:
            options += ["-p", str(self.target.port)]
        if self.target.user:
            options += ["-l", self.target.user]
        return options

    def argv(self, program: Sequence[str]) -> list[str]:
        command = shlex.join(program)
        ssh = client("ssh")
        return [ssh, *self._options(), "-o", "ControlMaster=no", "--", self.target.host, command]

    async def connect(self) -> None:
        ssh = client("ssh")
        if self._master is not None and self._master.returncode is None:
            if self.control.exists():
                return
            await self.close_master()
        self.control.unlink(missing_ok=True)
        log = self._folder / "connect.log"
        master = [ssh, *self._options(), "-o", "ControlMaster=yes", "-o", "ControlPersist=no"]
        fd = lifeline()  # the master dies with this process, however it ends
        with open(log, "wb") as err:
            self._master = await asyncio.create_subprocess_exec(
                *watched([*master, "-N", "--", self.target.host], fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                pass_fds=(fd,),
            )
        deadline = asyncio.get_running_loop().time() + CONNECT_TIMEOUT + 5
        # Logged in once its socket is there; gone if it exits (refused, unreachable).
        while not self.control.exists() and self._master.returncode is None:
            if asyncio.get_running_loop().time() > deadline:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._master.wait()), 0.05)
        if not self.control.exists():
            await self.close_master()
            said = log.read_text(encoding="utf-8", errors="replace")
            raise RemoteUnavailable(f"cannot reach {self.target}: {last_line(said)}")

    async def close_master(self) -> None:
        if self._master is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._master.pid, signal.SIGKILL)
            await self._master.wait()
            self._master = None

    async def close(self) -> None:
        await self.close_master()
        shutil.rmtree(self._folder, ignore_errors=True)


class DockerRunner:
    """`docker exec CONTAINER` (the `docker` client's settings, `DOCKER_HOST` and the like,
    say which daemon)."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target

    def argv(self, program: Sequence[str]) -> list[str]:
        return [client("docker"), "exec", "-i", "--", self.target.host, *program]

    async def connect(self) -> None:
        code, said = await _output(self.argv(["true"]))
        if code != 0:
            raise RemoteUnavailable(f"cannot reach {self.target}: {last_line(said)}")

    async def close(self) -> None:
        return None


def runner_for(target: RemoteTarget) -> Runner:
    return SshRunner(target) if target.scheme == "ssh" else DockerRunner(target)
