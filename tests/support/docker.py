"""A real Docker daemon and container for the remote-workspace tests: `dockerd` started on
a socket in a temp folder (its data there too, no network set up), one container from an
image that holds nothing but the usual top-level links, with this machine's /usr and /etc
mounted read-only (so its python3 is Debian's) and the test run's temp folder mounted at
the same path (so a test's files are the container's). The client side is `DOCKER_HOST`.

Needs Debian's `docker.io` (which `.ci/run` installs) and root; skips with the reason
otherwise."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCKERD = shutil.which("dockerd")
IMAGE = "deepacp-test-empty"
LINKS = {"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "sbin": "usr/sbin"}


@dataclass(frozen=True)
class DockerBox:
    container: str
    socket: Path

    def url(self, path: Path | str) -> str:
        return f"docker://{self.container}{path}"

    def env(self) -> dict[str, str]:
        return {"DOCKER_HOST": f"unix://{self.socket}"}


def _docker(box_env: dict[str, str], *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(
        ["docker", *args],
        input=data,
        capture_output=True,
        env={**os.environ, **box_env},
        timeout=120,
    )
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()[-300:]
        pytest.skip(f"docker {args[0]} failed here: {said or 'no reason given'}")
    return done.stdout.decode().strip()


def _empty_image() -> bytes:
    """A root file system with only the top-level links and the mount points."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("usr", "etc", "tmp"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
            tar.addfile(info)
        for name, target in LINKS.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buffer.getvalue()


@contextlib.contextmanager
def running_docker(folder: Path, shared: Path) -> Iterator[DockerBox]:
    """A daemon and a container with `shared` mounted at its own path; skips the test
    (with the reason) where that cannot be had."""
    if DOCKERD is None or shutil.which("docker") is None:
        pytest.skip("Docker is not installed: apt-get install docker.io")
    if os.geteuid() != 0:
        pytest.skip("the test's own Docker daemon needs root")
    if not Path("/usr/bin/python3").exists():
        pytest.skip("the container borrows /usr/bin/python3, which is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    socket = folder / "docker.sock"
    log = open(folder / "dockerd.log", "wb")  # noqa: SIM115 (closed below)
    daemon = subprocess.Popen(
        [
            DOCKERD,
            f"--host=unix://{socket}",
            f"--data-root={folder / 'data'}",
            f"--exec-root={folder / 'exec'}",
            f"--pidfile={folder / 'dockerd.pid'}",
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
            "--storage-driver=vfs",
        ],
        stdout=log,
        stderr=log,
    )
    box = DockerBox(f"deepacp-test-{uuid.uuid4().hex[:12]}", socket)
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(
            ["docker", "version"], capture_output=True, env={**os.environ, **box.env()}
        ).returncode:
            if daemon.poll() is not None or time.monotonic() > deadline:
                said = (folder / "dockerd.log").read_text(errors="replace").strip()[-300:]
                pytest.skip(f"dockerd could not start here: {said or 'no reason given'}")
            time.sleep(0.2)
        _docker(box.env(), "import", "-", IMAGE, data=_empty_image())
        _docker(
            box.env(),
            "run",
            "--detach",
            "--name",
            box.container,
            "--network",
            "none",
            "--volume",
            "/usr:/usr:ro",
            "--volume",
            "/etc:/etc:ro",
            "--volume",
            f"{shared}:{shared}",
            IMAGE,
            "/usr/bin/sleep",
            "infinity",
        )
        yield box
    finally:
        subprocess.run(
            ["docker", "rm", "--force", box.container],
            capture_output=True,
            env={**os.environ, **box.env()},
        )
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def docker_box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DockerBox]:
    """One daemon and container for the whole test run (skipped where they cannot start;
    defined once, in tests/conftest.py). The daemon's folder is outside the shared one, so
    tests never see its files; its socket's path stays short."""
    shared = tmp_path_factory.getbasetemp()
    folder = Path(tempfile.mkdtemp(prefix="deepacp-dockerd-", dir="/var/tmp"))
    with running_docker(folder, shared) as box:
        yield box
