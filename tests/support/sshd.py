"""A real OpenSSH server on 127.0.0.1 for the remote-workspace tests: `sshd -D` on a free
port with a throwaway host key and user key, its files in a temp folder, logging in as the
user running the tests. The client side is an ssh_config file in the same folder
(`DEEPACP_SSH_CONFIG`): its own key and known_hosts, never ~/.ssh."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)


@dataclass(frozen=True)
class SshServer:
    port: int
    user: str
    config: Path
    """The client's ssh_config (for `ssh -F`, or `DEEPACP_SSH_CONFIG`)."""

    def url(self, path: Path | str) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{path}"

    def env(self) -> dict[str, str]:
        return {"DEEPACP_SSH_CONFIG": str(self.config)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def _answers(server: SshServer) -> bool:
    probe = ["ssh", "-F", str(server.config), "-p", str(server.port), "-l", server.user]
    done = subprocess.run(
        [*probe, "-o", "BatchMode=yes", "127.0.0.1", "true"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    return done.returncode == 0


@contextlib.contextmanager
def running_sshd(folder: Path) -> Iterator[SshServer]:
    """An sshd for this test run; skips the test (with the reason) where it cannot start."""
    if SSHD is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip(
            "OpenSSH (sshd, ssh, ssh-keygen) is not installed: apt-get install openssh-server"
        )
    folder.mkdir(parents=True, exist_ok=True)
    _keygen(folder / "host_key")
    _keygen(folder / "user_key")
    shutil.copy(folder / "user_key.pub", folder / "authorized_keys")
    port, user = _free_port(), getpass.getuser()
    (folder / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile {folder / 'sshd.pid'}\n"
        "StrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nMaxStartups 50\nLogLevel ERROR\n"
        # bash started by sshd reads ~/.bashrc unless it is a nested shell: this machine's
        # start-up (root's runs `pyenv init`, ~0.4 s of CPU) would be paid by every remote
        # operation of every test. The remote tests are about deepacp, not this login.
        "SetEnv SHLVL=1\n"
    )
    host_key = (folder / "host_key.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    config = folder / "ssh_config"
    config.write_text(
        f"Host *\n  IdentityFile {folder / 'user_key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {folder / 'known_hosts'}\n  GlobalKnownHostsFile /dev/null\n"
        "  StrictHostKeyChecking yes\n  LogLevel ERROR\n"
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
    log = open(folder / "sshd.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(folder / "sshd_config")], stdout=log, stderr=log
    )
    server = SshServer(port, user, config)
    try:
        deadline = time.monotonic() + 30
        while not _answers(server):
            if proc.poll() is not None or time.monotonic() > deadline:
                reason = (folder / "sshd.log").read_text(errors="replace").strip()[-300:]
                pytest.skip(f"sshd could not start here: {reason or 'no reason given'}")
            time.sleep(0.1)
        yield server
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """One sshd for the whole test run (skipped where it cannot start)."""
    with running_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server
