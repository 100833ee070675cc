"""Sessions in PostgreSQL, over the real binary: two "machines" (two servers, each with its
own $DEEPACP_HOME) share one session list through a real database the fixture starts."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.acp import write_script
from tests.support.postgres import PostgresServer, free_port

PASSWORD = "hunter2-database-pw"


def logs(home: Path) -> str:
    return "".join(p.read_text() for p in (home / "logs").glob("deepacp.log*"))


pytestmark = pytest.mark.e2e  # two servers, one killed: each a process of its own


async def test_a_session_started_on_one_machine_is_listed_loaded_and_resumed_on_another(
    agent_factory, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.new_database(password=PASSWORD)
    home_a, home_b = tmp_path / "home-a", tmp_path / "home-b"
    home_b.mkdir()
    (home_b / "config.toml").write_text(f'database = "{url}"\n')  # B: config.toml, A: env
    verbose = {"DEEPACP_LOG_LEVEL": "DEBUG"}
    first = [{"content": "Hello from machine A."}]
    async with (
        agent_factory(first, home=home_a, env={"DEEPACP_DATABASE_URL": url, **verbose}) as a,
        agent_factory([], home=home_b, env=verbose, script_name="b.json") as b,
    ):
        session = await a.new_session()
        assert (await a.prompt(session, "start on A")).stop_reason == "end_turn"
        # The session keeps its model spec (A's script path); on machine B that model
        # answers the next turn.
        write_script(a.script, [{"content": "Hello from machine B."}])

        listed = await b.conn.list_sessions(cwd=str(b.workspace))
        assert [(s.session_id, s.title) for s in listed.sessions] == [(session, "start on A")]

        # While A has it open, B can neither load nor drive it.
        with pytest.raises(RequestError) as refused:
            await b.conn.load_session(cwd=str(b.workspace), session_id=session, mcp_servers=[])
        assert "open in another deepacp process" in str(refused.value)
        with pytest.raises(RequestError) as refused:
            await b.prompt(session, "steal it")
        assert "open in another deepacp process" in str(refused.value)
        assert b.client.of(S.AgentMessageChunk) == []

        await a.conn.close_session(session_id=session)
        await b.conn.load_session(cwd=str(b.workspace), session_id=session, mcp_servers=[])
        users = [u.content.text for u in b.client.of(S.UserMessageChunk)]
        assert users == ["start on A"] and b.client.text() == "Hello from machine A."
        assert (await b.prompt(session, "continue on B")).stop_reason == "end_turn"
        assert b.client.text().endswith("Hello from machine B.")

        # Now B drives it: A is refused, and sees B's turn in the shared list.
        with pytest.raises(RequestError) as refused:
            await a.prompt(session, "back to A")
        assert "open in another deepacp process" in str(refused.value)
        [entry] = (await a.conn.list_sessions(cwd=str(a.workspace))).sessions
        assert entry.updated_at > listed.sessions[0].updated_at
    for home in (home_a, home_b):
        assert (home / "logs").exists() and PASSWORD not in logs(home)
        assert not (home / "sessions.db").exists()  # nothing went to the SQLite default


async def test_a_session_whose_process_was_killed_opens_on_the_other_machine(
    agent_factory, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """No stale fence: PostgreSQL drops a dead process's locks with its connection."""
    env = {"DEEPACP_DATABASE_URL": postgres_server.new_database()}
    async with agent_factory([{"content": "one"}], home=tmp_path / "home-a", env=env) as a:
        session = await a.new_session()
        await a.prompt(session, "first")
        a.process.send_signal(signal.SIGKILL)
        await a.process.wait()
        a.wire.incoming.clear()  # the killed connection may have half-read frames
    write_script(a.script, [{"content": "two"}])
    async with agent_factory([], home=tmp_path / "home-b", env=env, script_name="b.json") as b:

        async def load() -> bool:
            try:
                await b.conn.load_session(cwd=str(b.workspace), session_id=session, mcp_servers=[])
            except RequestError as exc:  # the server may not have seen the death yet
                assert "open in another deepacp process" in str(exc)
                return False
            return True

        deadline = time.monotonic() + 10
        while not await load():
            assert time.monotonic() < deadline, "the dead process's lock was never dropped"
            await asyncio.sleep(0.05)
        assert b.client.text() == "one"
        assert (await b.prompt(session, "second")).stop_reason == "end_turn"
        assert b.client.text() == "onetwo"


async def test_a_database_that_is_down_is_a_clear_error_and_the_server_stays_up(
    agent_factory, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    down = f"postgresql://deepacp:{PASSWORD}@127.0.0.1:{free_port()}/deepacp"  # none listens
    async with agent_factory([{"content": "never"}], env={"DEEPACP_DATABASE_URL": down}) as agent:
        for attempt in (
            agent.new_session,
            lambda: agent.conn.list_sessions(cwd=str(agent.workspace)),
            lambda: agent.conn.load_session(
                cwd=str(agent.workspace), session_id="abc", mcp_servers=[]
            ),
        ):
            with pytest.raises(RequestError) as error:
                await attempt()
            message = str(error.value)
            assert "session database postgresql://deepacp@127.0.0.1" in message
            assert "cannot be used" in message and "\n" not in message
            assert PASSWORD not in message
        assert agent.process.returncode is None  # still serving
    assert PASSWORD not in logs(agent.home)


async def test_a_url_that_is_not_postgres_is_refused_at_session_new(agent_factory) -> None:
    env = {"DEEPACP_DATABASE_URL": f"mysql://me:{PASSWORD}@db.example/deepacp"}
    async with agent_factory([{"content": "never"}], env=env) as agent:
        with pytest.raises(RequestError) as error:
            await agent.new_session()
        assert "must start with postgresql://" in str(error.value)
        assert PASSWORD not in str(error.value)
