"""Many sessions at once in one server, and several servers sharing one `$DEEPACP_HOME` (two
editor windows): nothing leaks between sessions, nothing is lost, nothing is forked."""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import time
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.reliability import size

TURNS = [
    {
        "tool_calls": [
            {"id": "r", "name": "read_file", "args": {"file_path": "token.txt"}},
            {"id": "w", "name": "write_file", "args": {"file_path": "out.txt", "content": "ok\n"}},
        ]
    },
    {"content": "done"},
]


def workspaces(tmp_path: Path, count: int) -> list[Path]:
    out = []
    for i in range(count):
        folder = tmp_path / f"ws{i}"
        folder.mkdir()
        (folder / "token.txt").write_text(f"token-{i}-of-this-workspace\n")
        out.append(folder)
    return out


def result_text(card: dict) -> str:
    return "".join(
        getattr(getattr(c, "content", None), "text", "") or "" for c in card.get("content") or []
    )


@pytest.mark.slow(reason="20 sessions' turns at once in one server (40 at full size)")
async def test_concurrent_sessions_do_not_leak_into_each_other(
    agent_factory, tally, tmp_path: Path
) -> None:
    count = size(20, 40)
    folders = workspaces(tmp_path, count)
    t = tally("concurrency: sessions in one process")
    async with agent_factory(TURNS) as agent:
        sessions = [await agent.new_session(folder) for folder in folders]
        for i, session in enumerate(sessions):
            if i % 2 == 0:  # half the sessions need no approval, half ask
                await agent.conn.set_session_mode(session_id=session, mode_id="yolo")

        async def turn(i: int) -> float:
            started = time.perf_counter()
            response = await agent.prompt(sessions[i], f"task {i}")
            assert response.stop_reason == "end_turn"
            return (time.perf_counter() - started) * 1000

        latencies = await asyncio.gather(*(turn(i) for i in range(count)))
        asked = {r.session_id: r for r in agent.client.permission_requests}
        for i, (session, folder) in enumerate(zip(sessions, folders, strict=True)):
            cards = agent.client.cards(session)
            read = result_text(cards.get("r", {}))
            others = [j for j in range(count) if j != i and f"token-{j}-" in read]
            written = sorted(p.name for p in folder.iterdir())
            request = asked.get(session)
            checks = {
                "own token read": f"token-{i}-of-this-workspace" in read and not others,
                "wrote only its workspace": written == ["out.txt", "token.txt"],
                "its own mode": (request is None) == (i % 2 == 0),
                "approval on its own card": request is None
                or request.tool_call.tool_call_id == "w",
                "its own file on the card": [Path(loc.path) for loc in cards["w"]["locations"]]
                == [folder / "out.txt"],
            }
            for what, ok in checks.items():
                t.record(ok, f"session {i}: {what}")
    # A fresh process replays each history: only that session's prompt is in it.
    async with agent_factory([]) as reloaded:
        for i, (session, folder) in enumerate(zip(sessions, folders, strict=True)):
            reloaded.client.updates.clear()
            await reloaded.conn.load_session(cwd=str(folder), session_id=session, mcp_servers=[])
            prompts = [u.content.text for u in reloaded.client.of(S.UserMessageChunk, session)]
            t.record(prompts == [f"task {i}"], f"session {i}: history {prompts}")
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    t.figures.update({"sessions": count, "p50_ms": round(p50), "p99_ms": round(p99)})
    print(f"{count} concurrent turns: p50 {p50:.0f} ms, p99 {p99:.0f} ms")
    t.check()


@pytest.mark.slow(reason="two deepacp servers on one home, 8 sessions and 16 turns between them")
@pytest.mark.e2e
async def test_two_servers_share_a_home_without_losing_or_forking_sessions(
    agent_factory, tally, tmp_path: Path
) -> None:
    t = tally("concurrency: servers sharing a home")
    per_server = size(4, 10)
    folders = workspaces(tmp_path, 2 * per_server)
    async with agent_factory(TURNS) as a, agent_factory(TURNS) as b:  # same $DEEPACP_HOME

        async def work(agent, folder: Path) -> str:
            session = await agent.new_session(folder)
            await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
            for n in range(2):
                response = await agent.prompt(session, f"prompt {n} in {folder.name}")
                t.record(response.stop_reason == "end_turn", f"{folder.name}: prompt {n}")
            return session

        jobs = [work(a if i % 2 else b, folder) for i, folder in enumerate(folders)]
        sessions = await asyncio.gather(*jobs)

        # A session open in one server is refused by the other, with a reason.
        with pytest.raises(RequestError) as refused:
            await b.conn.load_session(cwd=str(folders[1]), session_id=sessions[1], mcp_servers=[])
        t.record("open in another deepacp process" in str(refused.value), "fenced")
        await a.conn.close_session(session_id=sessions[1])
        await b.conn.load_session(cwd=str(folders[1]), session_id=sessions[1], mcp_servers=[])
        t.record(True, "opened once the other closed it")

        # A server that dies holding a session does not keep it locked.
        os.kill(a.process.pid, signal.SIGKILL)
        await a.process.wait()
        await b.conn.load_session(cwd=str(folders[3]), session_id=sessions[3], mcp_servers=[])
        t.record(True, "opened after the holder was killed")

    async with agent_factory([]) as third:
        listed = {s.session_id for s in (await third.conn.list_sessions()).sessions}
        t.record(set(sessions) <= listed, "every session listed")
        for session, folder in zip(sessions, folders, strict=True):
            third.client.updates.clear()
            await third.conn.load_session(cwd=str(folder), session_id=session, mcp_servers=[])
            prompts = [u.content.text for u in third.client.of(S.UserMessageChunk, session)]
            expected = [f"prompt {n} in {folder.name}" for n in range(2)]
            t.record(prompts == expected, f"{folder.name}: history {prompts}")
    t.check()
