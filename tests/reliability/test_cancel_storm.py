"""Cancel storms: `session/cancel` at a random moment of turn after turn, on one server.

Each round makes one model call and cancels it at a random point of one of three phases:
while the model streams, while a command runs (a shell with a background child), or while
a permission question is open (the client then answers "cancelled", as Zed does). Every
round must answer `cancelled` promptly, leave no card open and no process alive; every few
rounds an ordinary prompt checks the model is shown a valid history (each tool call
answered once) and that the session still works.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from pathlib import Path

import pytest
from acp import schema as S

from tests.support.reliability import size
from tests.support.waits import history_problems, marked, marked_pids, pid_alive, wait_for

pytestmark = pytest.mark.e2e

SEED = 2026
RUN = uuid.uuid4().hex  # marks this run's commands (see `marked`)
PHASES = ("model stream", "tool running", "approval pending")
CHECK_EVERY = 10
CANCEL_WITHIN = 2.0  # seconds from session/cancel to the `cancelled` answer


def round_turn(phase: str, n: int) -> dict:
    """The one model call of round `n`."""
    if phase == "model stream":
        long = " ".join(f"streaming part {i} of a long answer" for i in range(60))
        return {"content": long, "delay_ms": 5}  # no loop (the guard would stop one)
    if phase == "tool running":
        command = marked("sleep 30 & sleep 30", f"{RUN}-{n}")
        return {"tool_calls": [{"id": f"r{n}", "name": "execute", "args": {"command": command}}]}
    args = {"file_path": f"never{n}.txt", "content": "must not be written\n"}
    return {"tool_calls": [{"id": f"r{n}", "name": "write_file", "args": args}]}


def plan(rng: random.Random, rounds: int) -> tuple[list[str | None], list[dict]]:
    """The rounds (a phase, or None for a check prompt) and the script they consume."""
    schedule: list[str | None] = []
    turns: list[dict] = []
    for n in range(rounds):
        phase = rng.choice(PHASES)
        schedule.append(phase)
        turns.append(round_turn(phase, n))
        if (n + 1) % CHECK_EVERY == 0 or n == rounds - 1:
            schedule.append(None)
            turns.append({"content": f"still fine after {n + 1}"})
    return schedule, turns


def open_cards(cards: dict[str, dict]) -> list[str]:
    return [i for i, c in cards.items() if c["statuses"][-1] not in ("completed", "failed")]


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


class Storm:
    """One server, one session; each round cancels one turn at a point of its phase."""

    def __init__(self, agent, session: str, rng: random.Random) -> None:
        self.agent, self.session, self.rng = agent, session, rng
        self.asked = asyncio.Event()
        self.stopped = asyncio.Event()
        self.latencies: list[float] = []
        agent.client.on_permission = self.hold_the_question

    async def hold_the_question(self, request: S.RequestPermissionRequest) -> None:
        self.asked.set()
        await self.stopped.wait()  # the user pressed stop: Zed then answers "cancelled"

    async def reach(self, phase: str, n: int, chunks: int) -> list[int]:
        """Wait until the turn is in `phase`; the pids of the command it runs, if any."""
        client = self.agent.client
        if phase == "model stream":
            await wait_for(lambda: len(client.of(S.AgentMessageChunk)) > chunks)
        elif phase == "approval pending":
            await wait_for(self.asked.is_set)
        else:
            await wait_for(lambda: len(marked_pids(f"{RUN}-{n}")) >= 2)
            return marked_pids(f"{RUN}-{n}")
        return []

    async def round(self, phase: str, n: int) -> list[str]:
        agent, client = self.agent, self.agent.client
        mode = "ask" if phase == "approval pending" else "yolo"
        await agent.conn.set_session_mode(session_id=self.session, mode_id=mode)
        self.asked.clear()
        self.stopped.clear()
        client.answers = [None]
        chunks = len(client.of(S.AgentMessageChunk))
        task = asyncio.create_task(agent.prompt(self.session, f"round {n}"))
        pids = await self.reach(phase, n, chunks)
        await asyncio.sleep(self.rng.uniform(0, 0.05))
        started = time.monotonic()
        await agent.conn.cancel(session_id=self.session)
        self.stopped.set()
        problems = []
        try:
            response = await asyncio.wait_for(asyncio.shield(task), CANCEL_WITHIN)
            self.latencies.append(time.monotonic() - started)
            if response.stop_reason != "cancelled":
                problems.append(f"answered {response.stop_reason}")
        except TimeoutError:
            problems.append(f"no answer within {CANCEL_WITHIN} s of the cancel")
            await task
        if still_open := open_cards(client.cards()):
            problems.append(f"cards left open: {still_open}")
        try:
            await wait_for(lambda: not any(map(pid_alive, pids)), timeout=3)
        except AssertionError:
            problems.append(f"processes left running: {[p for p in pids if pid_alive(p)]}")
        if (agent.workspace / f"never{n}.txt").exists():
            problems.append("a write whose question was cancelled happened")
        return problems

    async def check(self, model_requests) -> list[str]:
        response = await self.agent.prompt(self.session, "are you still there?")
        problems = []
        if response.stop_reason != "end_turn":
            problems.append(f"check prompt answered {response.stop_reason}")
        return problems + history_problems(model_requests()[-1])


async def test_cancel_at_random_points_of_many_turns(agent_factory, model_requests, tally) -> None:
    rng = random.Random(SEED)
    t = tally("cancel storm")
    schedule, turns = plan(rng, size(20, 200))
    async with agent_factory(turns) as agent:
        storm = Storm(agent, await agent.new_session(), rng)
        n = -1
        for phase in schedule:
            if phase is None:
                t.record(not (problems := await storm.check(model_requests)), f"check: {problems}")
            else:
                n += 1
                problems = await storm.round(phase, n)
                t.record(not problems, f"round {n} ({phase}): {problems}")
        assert children_of(agent.process.pid) == [], "the server still has child processes"
    latencies = sorted(storm.latencies)
    t.figures["cancel_p50_ms"] = round(1000 * latencies[len(latencies) // 2], 1)
    t.figures["cancel_max_ms"] = round(1000 * latencies[-1], 1)
    print(
        f"cancel latency p50 {t.figures['cancel_p50_ms']} ms, max {t.figures['cancel_max_ms']} ms"
    )
    t.check()
