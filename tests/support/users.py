"""Who runs `deepacp` in a sandbox test: root, as the suite often does, or an ordinary user,
as most users are. Root keeps rights inside bubblewrap that a user does not have (its own
files whatever their modes), so a sandbox promise is tested as both.

`runner` is the fixture, parametrized `root` and `user`. Under a root suite the ordinary
user is `TEST_USER`, made once with `useradd` (kept for later runs), and runs `deepacp`
through `setpriv` with a Python of its own: a venv, made per test session, over the test
environment's packages (the test Python may lie in root's 0700 home). Under a user's
suite `root` is skipped and `user` is the suite's own user. Each is skipped with the
reason where it cannot be.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

TEST_USER = "deepacp-tests"
USERADD_LOCK = Path(tempfile.gettempdir()) / "deepacp-tests-useradd.lock"
PROBE = "from deepacp.backends.sandbox import sandbox_problem; print(sandbox_problem() or '')"


@dataclass(frozen=True)
class Runner:
    """How to run programs as one user: `prefix` before the argv, `python` a Python with
    deepacp and pytest that this user can run."""

    name: str
    uid: int
    gid: int
    python: str
    prefix: tuple[str, ...] = ()

    def deepacp(self, *args: str) -> tuple[str, ...]:
        return (*self.prefix, self.python, "-m", "deepacp", *args)

    def run(self, argv: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([*self.prefix, *argv], **kwargs)

    def own(self, path: Path) -> None:
        """Give `path` and everything in it to this user (nothing to do for ourselves)."""
        if self.uid == os.geteuid():
            return
        for folder, dirs, files in os.walk(path):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, self.uid, self.gid)


def _as(uid: int, gid: int) -> tuple[str, ...]:
    return ("setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--")


def _test_user() -> pwd.struct_passwd:
    """`TEST_USER`, made if missing. pytest-xdist's workers, and other runs, may want it at
    the same time: one makes it, under a lock, and the others find it made (a second
    `useradd` would fail on the lock of /etc/passwd or on the name)."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(TEST_USER)
    if shutil.which("useradd") is None:
        pytest.skip("the suite runs as root and useradd is missing: no ordinary user to test as")
    with open(USERADD_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(TEST_USER)
        made = subprocess.run(
            ["useradd", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/usr/sbin/nologin", TEST_USER],
            capture_output=True, text=True,
        )  # fmt: skip
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        pytest.skip(f"could not make the test user {TEST_USER}: {made.stderr.strip()}")


def _python_for(prefix: tuple[str, ...], folder: Path) -> str:
    """A venv in `folder` whose Python the user of `prefix` can run, over our packages."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [
        getattr(sys, "_base_executable", ""),
        os.path.join(sys.base_prefix, "bin", f"python{version}"),
        f"/usr/bin/python{version}",
        f"/usr/local/bin/python{version}",
    ]
    check = f"import sys; sys.exit(sys.version_info[:2] != {sys.version_info[:2]})"
    # Through a shell, as commands start it (setpriv's own exec may get further).
    run = [*prefix, "/bin/sh", "-c", 'exec "$0" -S -c "$1"']
    usable = [
        c
        for c in dict.fromkeys(candidates)
        if c and os.path.exists(c) and not subprocess.run([*run, c, check]).returncode
    ]
    if not usable:
        pytest.skip(f"no Python {version} that {TEST_USER} can run (ours is {sys.executable})")
    venv = folder / "venv"
    subprocess.run([usable[0], "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv)}))
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (site / "deepacp-tests.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in sorted(ours))
    )
    return str(venv / "bin" / "python")


@pytest.fixture(scope="session")
def ordinary_user() -> Iterator[Runner]:
    """The ordinary user the sandbox tests run `deepacp` as (skipped where there is none)."""
    if os.geteuid() != 0:
        yield Runner("user", os.geteuid(), os.getegid(), sys.executable)
        return
    if shutil.which("setpriv") is None:
        pytest.skip("the suite runs as root and setpriv is missing: cannot run as a user")
    account = _test_user()
    prefix = _as(account.pw_uid, account.pw_gid)
    folder = Path(tempfile.mkdtemp(prefix="deepacp-test-user-", dir="/var/tmp"))
    folder.chmod(0o755)
    try:
        python = _python_for(prefix, folder)
        runner = Runner("user", account.pw_uid, account.pw_gid, python, prefix)
        probe = runner.run([python, "-c", PROBE], capture_output=True, text=True, cwd="/")
        problem = probe.stdout.strip() or (probe.returncode and probe.stderr.strip())
        if problem:
            pytest.skip(f"no sandbox for {TEST_USER}: {problem}")
        yield runner
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["root", "user"])
def runner(request: pytest.FixtureRequest) -> Runner:
    """Each sandbox test as root and as an ordinary user."""
    if request.param == "user":
        return request.getfixturevalue("ordinary_user")
    if os.geteuid() != 0:
        pytest.skip("the suite does not run as root (it runs as the ordinary user)")
    return Runner("root", 0, 0, sys.executable)


@pytest.fixture
def host_tmp(runner: Runner) -> Iterator[Path]:
    """A folder in the host's /tmp, which the sandbox hides, that `runner` may write: where
    a planted program leaves its marker when it runs outside the sandbox (with the runner's
    rights, so a folder it could not write would hide that it ran)."""
    folder = Path(tempfile.mkdtemp(prefix="deepacp-marker-", dir="/tmp"))
    folder.chmod(0o755)
    runner.own(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
