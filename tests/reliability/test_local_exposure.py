"""Another account on this machine must not get at the user's work. The documented set-ups
(docs/scaling-out.md) are private: PostgreSQL with passwords and a role that is no
superuser, `langgraph dev` that serves only the holder of its token. `deepacp doctor` warns,
with the fix, about a database or a server that lets any account on this machine in."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from acp import RequestError

from deepacp.exposure import PROBE, STUDIO, passwordless_entry
from tests.support.acp import DEEPACP
from tests.support.langgraph import start_langgraph
from tests.support.postgres import PostgresServer, running_postgres


def doctor(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "doctor-script.json"
    script.write_text('{"turns": []}')
    variables = {
        **os.environ,
        "DEEPACP_HOME": str(tmp_path / "doctor-home"),
        "DEEPACP_MODEL": f"scripted:{script}",
        **env,
    }
    return subprocess.run(
        [DEEPACP, *args, "doctor"], capture_output=True, text=True, timeout=120, env=variables
    )


def lines(result: subprocess.CompletedProcess, label: str) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith(label)]


def through_socket(url: str, server: PostgresServer) -> str:
    """`url` with its TCP host swapped for the server's socket folder."""
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    return f"postgresql://{auth}@{parts.path}?host={server.folder}&port={server.port}"


@pytest.mark.services
@pytest.mark.e2e
def test_doctor_warns_about_a_trusting_superuser_database(tmp_path: Path) -> None:
    with running_postgres(trusting=True) as server:  # the README's old throwaway set-up
        result = doctor(tmp_path, DEEPACP_DATABASE_URL=server.admin_url())
        socket = server.folder / f".s.PGSQL.{server.port}"
        entry = passwordless_entry(through_socket(server.admin_url(), server))
    warned = lines(result, "warn")
    assert any("role deepacp is a superuser" in w and "createuser" in w for w in warned), warned
    tcp = f"lets deepacp in without a password over TCP (127.0.0.1:{server.port})"
    assert any(tcp in w and "scram-sha-256" in w for w in warned), warned
    assert entry == f"through the socket {socket}"  # its folder: every account enters
    assert server.password not in result.stdout + result.stderr


@pytest.mark.services
@pytest.mark.e2e
def test_doctor_finds_the_private_database_private(tmp_path: Path, postgres_server) -> None:
    url = postgres_server.new_database()
    result = doctor(tmp_path, DEEPACP_DATABASE_URL=url)
    assert "is reachable" in result.stdout, result.stdout
    exposed = [w for w in lines(result, "warn") if "superuser" in w or "password" in w]
    assert exposed == []
    assert passwordless_entry(through_socket(url, postgres_server)) is None


@contextlib.contextmanager
def answering_anyone() -> Iterator[str]:
    """A server that answers every request, as `langgraph dev` without auth does."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"[]")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.e2e
def test_doctor_warns_about_a_server_that_answers_anyone(tmp_path: Path) -> None:
    with answering_anyone() as url:
        result = doctor(tmp_path, "--server", url)
    [warned] = [w for w in lines(result, "warn") if "LangGraph server" in w]
    assert "answers without a token" in warned and "DEEPACP_SERVER_TOKEN" in warned


@pytest.mark.services
@pytest.mark.slow(reason="starts `langgraph dev`, which may take a minute to answer under load")
async def test_the_langgraph_server_serves_only_the_holder_of_its_token(
    tmp_path: Path, agent_factory
) -> None:
    with start_langgraph(tmp_path, [{"content": "never"}]) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            for stranger in ({}, STUDIO, {"Authorization": "Bearer guessed"}):
                refused_http = await http.post(PROBE, json={}, headers=stranger)
                assert refused_http.status_code == 401, stranger
            assert (await http.post(PROBE, json={}, headers=server.headers)).status_code == 200

        unknown = {"DEEPACP_MODEL": ""}
        async with agent_factory([], args=("--server", server.url), env=unknown) as agent:
            with pytest.raises(RequestError) as refused:
                await agent.new_session()
        message = str(refused.value)
        assert "refused deepacp (401): set DEEPACP_SERVER_TOKEN" in message, message

        assert lines(doctor(tmp_path, "--server", server.url), "FAIL") == [
            f"FAIL the LangGraph server at {server.url} wants a token: set DEEPACP_SERVER_TOKEN"
        ]
        trusted = doctor(tmp_path, "--server", server.url, **server.env)
    assert f"ok   the LangGraph server at {server.url} lets in only" in trusted.stdout
    assert server.token not in trusted.stdout + trusted.stderr
