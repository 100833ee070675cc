"""One turn at a time: queued prompts run in order, a cancel drops them, steering waits."""

from __future__ import annotations

import asyncio

import pytest

from deepacp.errors import QueueFull
from deepacp.session.turns.queue import MAX_WAITING, TurnQueue


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


async def test_a_full_queue_refuses_and_a_cancel_empties_it() -> None:
    turns = TurnQueue()

    async def acknowledge() -> None:
        return None

    await turns.claim(acknowledge)
    waiting = [asyncio.create_task(turns.claim(acknowledge)) for _ in range(MAX_WAITING)]
    await asyncio.sleep(0)
    with pytest.raises(QueueFull, match=f"{MAX_WAITING} prompts already wait"):
        await turns.claim(acknowledge)
    turns.drop()
    assert await asyncio.gather(*waiting) == [False] * MAX_WAITING
    queued_again = asyncio.create_task(turns.claim(acknowledge))  # the places are free again
    await asyncio.sleep(0)
    assert not queued_again.done()
    turns.drop()
    assert await queued_again is False


def test_steering_keeps_a_bounded_number_of_messages() -> None:
    turns = TurnQueue()
    turns.busy = True
    for n in range(MAX_WAITING):
        assert turns.steer(f"message {n}")
    with pytest.raises(QueueFull, match="the running turn's next model call"):
        turns.steer("one too many")
    assert len(turns.steered()) == MAX_WAITING and turns.steer("room again")
