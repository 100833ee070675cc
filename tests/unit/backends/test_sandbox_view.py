"""What the sandbox shows of the host besides the workspace: which host sockets it covers,
what of a home it binds back, and why a user gets no user namespace (the attacks run in
tests/reliability/test_sandbox_home.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepacp.backends import sandbox_view
from deepacp.backends.sandbox_view import AGENT_ENV, HostView, _Mount, _shown_sockets
from deepacp.backends.userns import user_namespace_problem


def test_a_socket_is_covered_wherever_it_still_shows_outside_the_roots() -> None:
    mounts = [
        _Mount(Path("/"), Path("/")),
        _Mount(Path("/tmp")),
        _Mount(Path("/home")),
        _Mount(Path("/home/u/.cache"), Path("/data/cache")),
        _Mount(Path("/home/u/ws"), Path("/home/u/ws"), own=True),
    ]
    sockets = [
        Path("/var/lib/lxd/unix.socket"),
        Path("/tmp/.X11-unix/X0"),
        Path("/home/u/.rd/docker.sock"),
        Path("/data/cache/build.sock"),
        Path("/home/u/ws/test-server.sock"),
    ]
    assert _shown_sockets(mounts, sockets) == [
        Path("/var/lib/lxd/unix.socket"),
        Path("/data/cache/build.sock"),
        Path("/home/u/.cache/build.sock"),  # shown twice, covered twice
    ]


@pytest.fixture
def home(monkeypatch) -> Iterator[Path]:
    """A home outside /tmp (which the sandbox makes private as a whole)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp")).resolve()
    monkeypatch.setenv("HOME", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_home_is_covered_and_only_its_toolchains_come_back(home: Path) -> None:
    (home / ".rustup").mkdir()
    (home / ".ssh").mkdir()
    (home / ".cargo").mkdir()
    (home / ".cargo" / "bin").symlink_to(home / ".ssh")  # a link into a credential store
    (home / "bin").mkdir()
    workspace = home / "src" / "project"
    workspace.mkdir(parents=True)
    view = HostView([workspace], [home / ".ssh"], [home, home / "bin"])
    assert home in view.homes
    bound = dict((dest, source) for source, dest in view.binds)
    assert bound.get(home / ".rustup") == home / ".rustup"
    assert bound.get(home / "bin") == home / "bin"  # a folder on PATH
    assert home / ".cargo" / "bin" not in bound and home not in bound
    assert not view.shows(home / ".ssh") and not view.shows(home / "secret.txt")
    closing = view.closing([], [])
    assert f"--remount-ro {home} " in " ".join(closing)
    assert all(f"--unsetenv {name}" in " ".join(closing) for name in AGENT_ENV)


def test_a_home_that_holds_the_system_or_the_workspace_is_not_covered(
    home: Path, monkeypatch
) -> None:
    assert home in sandbox_view.hidden_homes()
    assert home not in HostView([home], [], []).homes  # the user opened the home itself
    monkeypatch.setenv("HOME", "/")
    assert Path("/") not in sandbox_view.hidden_homes()
    monkeypatch.setenv("HOME", "/usr")
    assert Path("/usr") not in sandbox_view.hidden_homes()


def sysctl(folder: Path, **values: str) -> Path:
    for name, value in values.items():
        path = folder / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{value}\n")
    return folder


def test_a_user_without_user_namespaces_is_told_which_setting_and_the_fix(
    tmp_path: Path,
) -> None:
    off = sysctl(tmp_path / "debian", kernel__unprivileged_userns_clone="0")
    said = user_namespace_problem("/nonexistent/bwrap", sysctl=off, uid=1000)
    assert "(uid 1000) may not create them (kernel.unprivileged_userns_clone = 0)" in said
    assert "sudo sysctl -w kernel.unprivileged_userns_clone=1" in said
    ubuntu = sysctl(tmp_path / "ubuntu", kernel__apparmor_restrict_unprivileged_userns="1")
    said = user_namespace_problem("/nonexistent/bwrap", sysctl=ubuntu, uid=1000)
    assert "kernel.apparmor_restrict_unprivileged_userns = 1" in said and "AppArmor" in said
    # Root is not bound by them; no user is when every limit is zero.
    assert "may not" not in user_namespace_problem("/nonexistent/bwrap", sysctl=off, uid=0)
    none = sysctl(tmp_path / "none", user__max_user_namespaces="0")
    said = user_namespace_problem("/nonexistent/bwrap", sysctl=none, uid=0)
    assert "user.max_user_namespaces = 0" in said
    fine = sysctl(tmp_path / "fine", user__max_user_namespaces="15000")
    said = user_namespace_problem("/nonexistent/bwrap", sysctl=fine, uid=os.geteuid())
    assert said.startswith("allow unprivileged user namespaces for user ")
