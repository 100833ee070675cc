"""Harness time per step as a thread grows: a scripted session of 4,000 messages on the
real SQLite checkpointer, driven as the editor faces drive it (`Session.prompt`).

    python benchmarks/step_cost.py [--messages 4000] [--runs 5]

Each turn is four messages (the question, a reply calling `ls`, its result, the answer):
three graph steps (model, tools, model). At 10, 100, 1,000 and 4,000 messages the script
times `--runs` turns and prints the median time per step, wall clock and this process's CPU
time (steadier on a loaded machine), and the ratio of the step at 1,000 messages to the
step at 10 (target: <= 1.5x, i.e. flat). The scripted model answers
at once, so the time is the harness's: middleware, state reads and writes, checkpoints,
the session's projection of the turn into updates.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from deepacp.models import resolve_model
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.store import SessionStore

MARKS = (10, 100, 1000, 4000)
PER_TURN = 4
STEPS_PER_TURN = 3
WARM_UP = 5
"""Turns of another session run first, so the first mark is not paying for first calls."""
TEXT = "a realistic paragraph of model output, " * 12  # ~500 characters per message


class Quiet:
    """A face that takes every update and allows everything."""

    async def emit(self, event) -> None:
        pass

    async def ask_permission(self, request) -> str:
        return "allow_once"

    async def ask(self, question) -> None:
        return None


def script(root: Path, name: str, turns: int) -> str:
    out: list[dict] = []
    for i in range(turns):
        call = {"id": f"c{i}", "name": "ls", "args": {"path": ""}}
        out += [{"content": TEXT, "tool_calls": [call]}, {"content": TEXT}]
    path = root / f"{name}.json"
    path.write_text(json.dumps({"turns": out}))
    return f"scripted:{path}"


async def grow(root: Path, marks: tuple[int, ...], runs: int) -> dict[int, tuple[float, float]]:
    """Median seconds per step at each mark (the thread holding about that many messages),
    wall clock and CPU."""
    workspace = root / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    manager = SessionManager(SessionStore(root / "home"), resolve_model)
    try:
        warm = manager.new_record(str(workspace), "yolo", script(root, "warm", WARM_UP))
        session = manager.open(warm, Workspace(str(workspace)), Quiet())
        for i in range(WARM_UP):
            await session.prompt(f"warm-up {i}")
        turns = max(marks) // PER_TURN + runs + 1
        record = manager.new_record(str(workspace), "yolo", script(root, "bench", turns))
        session = manager.open(record, Workspace(str(workspace)), Quiet())
        per_step: dict[int, tuple[float, float]] = {}
        messages = 0

        async def turn(i: int) -> tuple[float, float]:
            nonlocal messages
            start, cpu = time.perf_counter(), time.process_time()
            assert await session.prompt(f"question {i} {TEXT}") == "end_turn"
            messages += PER_TURN
            return time.perf_counter() - start, time.process_time() - cpu

        i = 0
        for mark in marks:  # the measured turns are centred on the mark
            while messages + PER_TURN <= mark - PER_TURN * (runs // 2):
                await turn(i)
                i += 1
            times = []
            for _ in range(runs):
                times.append(await turn(i))
                i += 1
            per_step[mark] = (
                statistics.median(t for t, _ in times) / STEPS_PER_TURN,
                statistics.median(c for _, c in times) / STEPS_PER_TURN,
            )
            print(f"  measured at {mark} messages", flush=True)
        return per_step
    finally:
        await manager.shutdown()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=MARKS[-1])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    marks = (*(m for m in MARKS if m < args.messages), args.messages)
    with tempfile.TemporaryDirectory() as tmp:
        per_step = await grow(Path(tmp), marks, args.runs)
    print(f"harness time per step (median of {args.runs} turns, {STEPS_PER_TURN} steps each)")
    print(f"  {'':>14}  {'wall':>8}  {'cpu':>8}")
    for mark, (wall, cpu) in per_step.items():
        print(f"  {mark:>5} messages: {wall * 1000:>6.1f} ms {cpu * 1000:>6.1f} ms")

    def ratio(of: int, to: int) -> str:
        wall, cpu = (per_step[of][k] / per_step[to][k] for k in (0, 1))
        return f"{wall:.2f}x wall, {cpu:.2f}x cpu"

    if 10 in per_step and 1000 in per_step:
        print(f"  1,000 vs 10 messages: {ratio(1000, 10)} (target <= 1.5x)")
    if marks[-1] != 1000:
        print(f"  {marks[-1]:,} vs {marks[0]} messages: {ratio(marks[-1], marks[0])}")


if __name__ == "__main__":
    asyncio.run(main())
