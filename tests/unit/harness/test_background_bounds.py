"""Background tasks are bounded: at most `MAX_RUNNING_TASKS` run at once (a start beyond
is refused), their commands hold at most their share of the slots, and a turn's tasks stop
with it, each telling why."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deepacp.backends.slots import CommandSlots, in_background
from deepacp.harness.background import MAX_RUNNING_TASKS, InProcessTasks, TaskRefused


class Forever:
    """A sub-agent that works until it is cancelled."""

    async def ainvoke(self, payload: Any, config: Any) -> Any:
        await asyncio.Event().wait()


async def test_a_start_beyond_the_bound_is_refused_and_a_turns_tasks_stop_with_it() -> None:
    prompt = ["p1"]
    ended: list[str] = []

    async def told(task_id: str) -> None:
        ended.append(task_id)

    runner = InProcessTasks(told, lambda: prompt[0])
    await runner.start("a", Forever(), {}, "call-a")
    prompt[0] = "p2"
    for n in range(1, MAX_RUNNING_TASKS):
        await runner.start(f"b{n}", Forever(), {}, f"call-b{n}")
    with pytest.raises(TaskRefused, match=f"{MAX_RUNNING_TASKS} background tasks are running"):
        await runner.start("c", Forever(), {})

    stopped = await runner.stop({"p2"}, "the turn that started it was cancelled")
    assert sorted(stopped) == [f"b{n}" for n in range(1, MAX_RUNNING_TASKS)]
    assert stopped["b1"].call_id == "call-b1"
    assert runner.status("a") == "running" and runner.status("b1") == "cancelled"
    outcome = await runner.outcome("b1")
    assert outcome.report == "the turn that started it was cancelled"
    while len(ended) < len(stopped):  # the session hears of them, to redraw its plan
        await asyncio.sleep(0)
    assert sorted(ended) == sorted(stopped)
    await runner.start("c", Forever(), {})  # room again
    assert await runner.cancel("a")
    assert (await runner.outcome("a")).report == ""  # cancelled by the agent: no why
    await runner.close()


async def test_background_work_holds_at_most_its_share_of_the_slots() -> None:
    slots = CommandSlots(3, 1)
    release = asyncio.Event()
    holding: list[str] = []

    async def command(name: str, background: bool) -> None:
        in_background.set(background)
        async with slots.held():
            holding.append(name)
            await release.wait()

    waiting = [asyncio.create_task(command(f"bg{n}", True)) for n in range(3)]
    await asyncio.sleep(0)
    foreground = [asyncio.create_task(command(f"fg{n}", False)) for n in range(2)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert sorted(holding) == ["bg0", "fg0", "fg1"]  # two background commands wait
    release.set()
    await asyncio.gather(*waiting, *foreground)
    with pytest.raises(ValueError):
        CommandSlots(2, 2)
