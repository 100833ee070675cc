"""`deepacp doctor` with a session database on a real PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_doctor import doctor


@pytest.mark.e2e  # the doctor is the binary
def test_the_session_database_is_reported_when_configured(tmp_path: Path, postgres_server) -> None:
    import psycopg

    from deepacp.session.storage.migrations import LATEST, migrate
    from tests.support.postgres import free_port

    script = tmp_path / "script.json"
    script.write_text('{"turns": []}')
    password = "hunter2-database-pw"
    url = postgres_server.new_database(password=password)
    shown = url.replace(f":{password}", "")
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", DEEPACP_DATABASE_URL=url)
    assert f"ok   session database {shown} is reachable (PostgreSQL" in result.stdout
    assert f"warn session database schema version 0: deepacp migrates it to {LATEST}" in (
        result.stdout
    )
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", DEEPACP_DATABASE_URL=url)
    assert result.returncode == 0, result.stdout
    assert f"ok   session database schema version {LATEST}" in result.stdout

    down = f"postgresql://deepacp:{password}@127.0.0.1:{free_port()}/deepacp"
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", DEEPACP_DATABASE_URL=down)
    assert result.returncode == 1
    [failed] = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert "session database postgresql://deepacp@127.0.0.1" in failed
    assert password not in result.stdout + result.stderr
