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
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import unquote, urlsplit

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


async def _output(argv: Sequence[str], stderr_file: Path | None = None) -> tuple[int, str]:
    """Run `argv` locally to its end; its exit code and what it said on stderr."""
    with contextlib.ExitStack() as stack:
        err = stack.enter_context(open(stderr_file, "wb")) if stderr_file else None
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=err or asyncio.subprocess.PIPE,
        )
        _, said = await proc.communicate()
    if stderr_file is not None:
        said = stderr_file.read_bytes()
    return proc.returncode or 0, (said or b"").decode("utf-8", "replace")


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no reason given"


class SshRunner:
    """`ssh HOST`, in batch mode (never a prompt) over one master connection that lives in
    a private temporary folder, so an operation does not pay for a new login."""

    def __init__(self, target: RemoteTarget, config: str | None = None) -> None:
        self.target = target
        self.config = config if config is not None else os.environ.get(SSH_CONFIG_ENV)
        self._folder = Path(tempfile.mkdtemp(prefix="deepacp-ssh-"))  # 0700
        self.control = self._folder / "master"

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
        return ["ssh", *self._options(), "-o", "ControlMaster=no", "--", self.target.host, command]

    async def connect(self) -> None:
        if shutil.which("ssh") is None:
            raise RemoteUnavailable("ssh is not installed here; install OpenSSH's client")
        check = ["ssh", *self._options(), "-O", "check", "--", self.target.host]
        if self.control.exists() and (await _output(check))[0] == 0:
            return
        self.control.unlink(missing_ok=True)
        master = ["ssh", *self._options(), "-o", "ControlMaster=yes", "-o", "ControlPersist=yes"]
        # -f: it goes to the background once logged in, keeping stderr: so stderr is a file.
        code, said = await _output(
            [*master, "-N", "-f", "--", self.target.host], self._folder / "connect.log"
        )
        if code != 0:
            raise RemoteUnavailable(f"cannot reach {self.target}: {last_line(said)}")

    async def close(self) -> None:
        if self.control.exists():
            with contextlib.suppress(OSError):
                await _output(["ssh", *self._options(), "-O", "exit", "--", self.target.host])
        shutil.rmtree(self._folder, ignore_errors=True)


class DockerRunner:
    """`docker exec CONTAINER` (untested here: the test machines run no docker daemon)."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target

    def argv(self, program: Sequence[str]) -> list[str]:
        return ["docker", "exec", "-i", "--", self.target.host, *program]

    async def connect(self) -> None:
        if shutil.which("docker") is None:
            raise RemoteUnavailable("docker is not installed here")
        code, said = await _output(self.argv(["true"]))
        if code != 0:
            raise RemoteUnavailable(f"cannot reach {self.target}: {last_line(said)}")

    async def close(self) -> None:
        return None


def runner_for(target: RemoteTarget) -> Runner:
    return SshRunner(target) if target.scheme == "ssh" else DockerRunner(target)
