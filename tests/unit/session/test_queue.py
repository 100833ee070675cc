"""One turn at a time: queued prompts run in order, a cancel drops them, steering waits."""

from __future__ import annotations

import asyncio

from deepacp.session.queue import TurnQueue


async def test_queued_prompts_run_in_order_and_a_cancel_drops_them() -> None:
    turns = TurnQueue()
    told: list[str] = []

    async def acknowledge() -> None:
        told.append("queued")

    assert await turns.claim(acknowledge) and turns.busy
    second = asyncio.create_task(turns.claim(acknowledge))
    third = asyncio.create_task(turns.claim(acknowledge))
    await asyncio.sleep(0)
    assert told == ["queued", "queued"] and not second.done()
    turns.release()
    assert await second is True and not third.done()  # the next in line, and only it
    assert turns.busy
    turns.drop()
    assert await third is False
    turns.release()
    assert not turns.busy


async def test_a_queued_prompt_stopped_as_its_turn_comes_passes_it_on() -> None:
    turns = TurnQueue()

    async def acknowledge() -> None:
        return None

    await turns.claim(acknowledge)
    stopped = asyncio.create_task(turns.claim(acknowledge))
    after = asyncio.create_task(turns.claim(acknowledge))
    await asyncio.sleep(0)
    turns.release()  # `stopped` is told its turn came...
    stopped.cancel()  # ...and is stopped before it runs
    await asyncio.gather(stopped, return_exceptions=True)
    assert await after is True


def test_steering_needs_a_running_turn() -> None:
    turns = TurnQueue()
    assert turns.steer("hi") is False and turns.steered() == []
    turns.busy = True
    assert turns.steer("hi") and turns.steer("there")
    assert turns.steered() == ["hi", "there"] and turns.steered() == []


async def test_a_cancel_while_a_queued_prompt_takes_over_still_stops_it() -> None:
    turns = TurnQueue()

    async def acknowledge() -> None:
        return None

    await turns.claim(acknowledge)
    queued = asyncio.create_task(turns.claim(acknowledge))
    await asyncio.sleep(0)
    turns.release()  # its turn comes...
    turns.drop()  # ...and the user cancels before it has started
    assert await queued is False
    assert not turns.busy
