"""Who else on this machine can reach where deepacp keeps the user's work: the session
database and the LangGraph server (`deepacp doctor` warns, one line each with the fix).

Every account on a machine can connect to every TCP port on it, 127.0.0.1 included, and to
a unix socket it can write in a folder it can enter. So a database is private when it wants
a password (or checks who connects: peer auth, or a socket folder only its user enters) and
gives deepacp's role no superuser power; a LangGraph server when it wants its token.
"""

from __future__ import annotations

import getpass
import os
import stat
from pathlib import Path
from typing import Any

from deepacp.session.storage.postgres import CONNECT_TIMEOUT, shown_url

SUPERUSER = "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
PROBE = "/threads/search"
"""A request only a let-in client gets answered (any LangGraph server has it)."""
STUDIO = {"x-auth-scheme": "langsmith"}
"""How LangGraph Studio asks in: a server that lets it past its own auth is open too."""


def database_exposure(conn: Any, url: str) -> list[str]:
    """What lets another account at the sessions in the database `conn` is open on."""
    role = conn.info.user
    found = []
    if conn.execute(SUPERUSER).fetchone()[0]:
        found.append(
            f"the session database role {role} is a superuser: whoever gets in as it can run "
            "programs on the database server (COPY ... TO PROGRAM); give deepacp a role that "
            f"owns only its database (createuser ROLE; createdb --owner ROLE {conn.info.dbname})"
        )
    if (entry := passwordless_entry(url)) is not None:
        found.append(
            f"the session database {shown_url(url)} lets {role} in without a password "
            f"{entry}, which every account on this machine can reach: require scram-sha-256 "
            "(or peer, for a socket) for it in pg_hba.conf"
        )
    return found


def passwordless_entry(url: str) -> str | None:
    """How another account could get in as the URL's role with no password ("over TCP
    HOST:PORT", "through the socket PATH"); None when none can, or it cannot be told.

    libpq's `require_auth=none` connects only if the server asks for nothing, so no
    password is ever sent. Asked for nothing over TCP, anyone gets in (trust). Over a
    socket, peer auth asks for nothing too but lets in only the account of the role's
    name: an open way only when the role is not ours, and the socket is not private."""
    import psycopg

    if _client_certificate(url):
        return None  # a certificate is a credential the server checks without asking
    try:
        with psycopg.connect(url, require_auth="none", connect_timeout=CONNECT_TIMEOUT) as probe:
            host, port, role = probe.info.host, probe.info.port, probe.info.user
    except psycopg.Error:  # it wants a password (or this libpq cannot ask: before 16)
        return None
    if not host.startswith("/"):
        return f"over TCP ({host}:{port})"
    socket = Path(host) / f".s.PGSQL.{port}"
    if role == getpass.getuser() or not reachable_by_others(socket):
        return None
    return f"through the socket {socket}"


def reachable_by_others(socket: Path) -> bool:
    """Whether any account can connect to `socket`: writable by all, in folders all enter."""
    try:
        if not socket.stat().st_mode & stat.S_IWOTH:
            return False
        return all(folder.stat().st_mode & stat.S_IXOTH for folder in socket.parents)
    except OSError:
        return False


def _client_certificate(url: str) -> bool:
    from psycopg.conninfo import conninfo_to_dict

    named = conninfo_to_dict(url).get("sslcert") or os.environ.get("PGSSLCERT")
    return bool(named) or (Path.home() / ".postgresql" / "postgresql.crt").exists()


def server_status(url: str, headers: dict[str, str] | None = None) -> int:
    """The HTTP status a LangGraph server answers a client that sends `headers` with
    (`httpx.HTTPError` when it cannot be reached)."""
    import httpx

    response = httpx.post(
        url.rstrip("/") + PROBE, json={"limit": 1}, headers=headers, timeout=CONNECT_TIMEOUT
    )
    return response.status_code
