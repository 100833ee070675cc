"""Searches that must stay bounded: a pattern that backtracks forever, a glob that compiles
to a catastrophic regex, a path glob over one huge data file, more than 1,000 matches.

A search is a read-only call, allowed in plan mode: whatever it is given, the server keeps
answering (`session/list`, `session/new`, `session/cancel`) while it runs, it finishes in
bounded time and memory, and both search paths (ripgrep and pure Python) give the same
ordered results.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from pathlib import Path

import pytest

from deepacp.backends import FilesystemBackend, GrepQuery, StateBackend, state_scope
from deepacp.backends.errors import BackendError
from deepacp.backends.overlay import OverlayBackend
from deepacp.backends.search import glob_matches
from tests.support.reliability import size

ANSWER_WITHIN = 5.0  # seconds for session/list, session/new and cancel during a search
REDOS_REGEX = ("(?=a)(a|aa)*b", "(a|aa)*b")
REDOS_GLOBS = ("**?**?**?**?**?**?**?**?**?**?**QQ", "*a*a*a*a*a*a*a*a*a*a*a*a*b")
SLOW_GLOBS = (*REDOS_GLOBS, "**/" * 12 + "Q", "{a,b}*{a,b}*{a,b}*{a,b}*{a,b}*Q")
VICTIM = "a" * 40  # a line every pattern above backtracks on


def rss_peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def victim_tree(workspace: Path) -> None:
    (workspace / "src").mkdir(parents=True, exist_ok=True)
    for name in ("a.txt", "b.txt", "c.py", "src/d.py", "src/" + "a" * 60):
        (workspace / name).write_text(f"{VICTIM}\n" * 3)


async def answers_quickly(agent, session: str) -> list[str]:
    """Problems with the requests an editor sends while a turn searches."""
    problems = []
    for name, call in (
        ("session/list", lambda: agent.conn.list_sessions()),
        ("session/new", lambda: agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[])),
    ):
        try:
            await asyncio.wait_for(call(), ANSWER_WITHIN)
        except TimeoutError:
            problems.append(f"{name} unanswered for {ANSWER_WITHIN} s")
    return problems


HOSTILE_CALLS = [{"name": "grep", "args": {"pattern": p, "regex": True}} for p in REDOS_REGEX] + [
    {"name": "glob", "args": {"pattern": p}} for p in REDOS_GLOBS
]


@pytest.mark.e2e
async def test_a_hostile_search_never_freezes_the_server(agent_factory, tally) -> None:
    t = tally("bounded search: the server answers during a hostile search")
    turns = []
    for i, call in enumerate(HOSTILE_CALLS):
        turns += [{"tool_calls": [{"id": f"s{i}", **call}]}, {"content": "done"}]
    async with agent_factory(turns) as agent:
        victim_tree(agent.workspace)
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="plan")
        for i, call in enumerate(HOSTILE_CALLS):
            what = f"{call['name']} {call['args']['pattern'][:24]}"
            turn = asyncio.create_task(agent.prompt(session, f"search {i}"))
            deadline = time.monotonic() + 10
            while f"s{i}" not in agent.client.cards() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            for problem in await answers_quickly(agent, session):
                t.record(False, f"{what}: {problem}")
            try:  # five small files: the search must be over long before this
                response = await asyncio.wait_for(asyncio.shield(turn), ANSWER_WITHIN)
                t.record(response.stop_reason == "end_turn", f"{what}: {response.stop_reason}")
                continue
            except TimeoutError:
                t.record(False, f"{what}: still searching after {ANSWER_WITHIN} s")
            await agent.conn.cancel(session_id=session)
            try:
                await asyncio.wait_for(turn, ANSWER_WITHIN)
            except TimeoutError:
                t.record(False, f"{what}: cancel unanswered for {ANSWER_WITHIN} s")
                agent.process.kill()  # frozen: do not wait for it to shut down
                turn.cancel()
            break  # the script is out of step once a turn was cancelled
    t.check()


async def test_python_regex_runs_with_a_deadline_off_the_event_loop(
    tally, tmp_path: Path, monkeypatch
) -> None:
    """Without ripgrep (and in the in-memory backends) Python's `re` does the matching: it
    runs in another process, the event loop keeps ticking, and a deadline ends it."""
    from deepacp.backends import search

    monkeypatch.setattr(search, "REGEX_DEADLINE", 0.5)
    t = tally("bounded search: Python regex deadline")
    victim_tree(tmp_path)
    disk = FilesystemBackend(tmp_path, use_ripgrep=False)
    overlay = OverlayBackend(FilesystemBackend(tmp_path))
    await overlay.write_text("new.txt", f"{VICTIM}\n")
    state = StateBackend()
    for backend_name, backend in (("disk", disk), ("overlay", overlay), ("state", state)):
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        beat = asyncio.create_task(heartbeat())
        started = time.monotonic()
        with state_scope({"x.txt": {"content": f"{VICTIM}\n", "modified_at": ""}}):
            try:
                await backend.grep(GrepQuery("(a|aa)*b", regex=True))
                t.record(False, f"{backend_name}: the backtracking search came back")
            except BackendError as exc:
                t.record("too long" in str(exc), f"{backend_name}: {exc}")
        elapsed = time.monotonic() - started
        beat.cancel()
        t.record(elapsed < 5, f"{backend_name}: took {elapsed:.1f} s")
        t.record(ticks >= elapsed / 0.05 / 3, f"{backend_name}: the loop ticked {ticks} times")
    t.check()


def test_globs_match_in_linear_time(tally) -> None:
    t = tally("bounded search: glob matching time")
    paths = ["a" * 200, "/".join(["a" * 20] * 12), "x/" * 50 + "y.py", "a" * 30 + "Q"]
    for pattern in SLOW_GLOBS:
        for path in paths:
            started = time.perf_counter()
            glob_matches(pattern, path)
            elapsed = time.perf_counter() - started
            t.record(elapsed < 0.5, f"{pattern[:20]} on {path[:20]}: {elapsed:.2f} s")
    t.check()


@pytest.mark.e2e
async def test_grep_with_a_path_glob_holds_little_memory(agent_factory, tally) -> None:
    t = tally("bounded search: memory of grep with a path glob")
    megabytes = size(40, 300)
    globs = ("data/*.txt", "src/**/*.py")  # the first takes in the big file, the other not
    turns = []
    for i, glob in enumerate(globs):
        grep = {"id": f"g{i}", "name": "grep", "args": {"pattern": "row", "glob": glob}}
        turns += [{"tool_calls": [grep]}, {"content": "done"}]
    async with agent_factory(turns) as agent:
        (agent.workspace / "data").mkdir()
        (agent.workspace / "src" / "pkg").mkdir(parents=True)
        (agent.workspace / "src" / "pkg" / "m.py").write_text("row = 1\n")
        line = b"row,1,2,3,4,5,6,7,8,9\n"
        with open(agent.workspace / "data" / "big.txt", "wb") as out:
            out.write(line * (megabytes * 1024 * 1024 // len(line)))
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="plan")
        before = rss_peak_mb(agent.process.pid)
        for i, glob in enumerate(globs):
            started = time.monotonic()
            response = await agent.prompt(session, f"search {i}")
            t.figures[f"{glob}_s"] = round(time.monotonic() - started, 1)
            t.record(response.stop_reason == "end_turn", response.stop_reason)
            card = agent.client.cards(session)[f"g{i}"]
            t.record(card["statuses"][-1] == "completed", f"{glob}: {card['statuses']}")
        grown = rss_peak_mb(agent.process.pid) - before
        t.record(grown < 150, f"the server grew by {grown:.0f} MB")
        t.figures["rss_growth_mb"] = round(grown)
    t.check()


async def test_the_python_search_reads_files_in_pieces(tally, tmp_path: Path) -> None:
    t = tally("bounded search: memory of the Python fallback")
    megabytes = size(40, 300)
    line = "row,1,2,3,4,5,6,7,8,9\n"
    (tmp_path / "big.txt").write_text(line * (megabytes * 1024 * 1024 // len(line)))
    backend = FilesystemBackend(tmp_path, use_ripgrep=False)
    tracemalloc.start()
    try:
        found = await backend.grep(GrepQuery("row,1"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    t.record(len(found) == 1000, f"{len(found)} matches")
    t.record(peak < 32 * 2**20, f"peak {peak / 2**20:.0f} MB for a {megabytes} MB file")
    t.check()


async def test_over_a_thousand_matches_rg_and_python_agree(tally, tmp_path: Path) -> None:
    t = tally("bounded search: same ordered results past the limit")
    files = size(60, 300)
    for i in range(files):
        folder = tmp_path / f"d{i % 7}" / (f"s{i % 3}" if i % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.txt").write_text("".join(f"hit {i} {n}\n" for n in range(40)))
    (tmp_path / "d1.txt").write_text("hit top\n")  # sorts between d1/ and d2/ by segment
    rg, python = FilesystemBackend(tmp_path), FilesystemBackend(tmp_path, use_ripgrep=False)
    expected = await python.grep(GrepQuery("hit", limit=1001))
    t.record(len(expected) == 1001, f"python found {len(expected)}")
    keys = [(m.path.split("/"), m.line) for m in expected]
    t.record(keys == sorted(keys), "python results in path order")
    for attempt in range(size(5, 50)):
        found = await rg.grep(GrepQuery("hit", limit=1001))
        t.record(found == expected, f"attempt {attempt}: rg gave a different result")
    t.check()
