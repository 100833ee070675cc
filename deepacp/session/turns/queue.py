"""One turn at a time: prompts that arrive while a turn runs wait in order (queued), and
messages steered into the running turn wait for its next model call. Each waits holding its
whole content, so a session keeps at most `MAX_WAITING` of either: more are refused."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from deepacp.errors import QueueFull

Content = str | list[dict]
MAX_WAITING = 32
"""Prompts a session keeps queued (and messages steered in) at once: far more than a person
types during one turn; a client that sends more is refused, not given all our memory."""


class TurnQueue:
    def __init__(self) -> None:
        self.busy = False
        """A turn runs, or a queued prompt is taking over from one."""
        self._waiting: list[asyncio.Future[bool]] = []
        """The queued prompts, in order; each is told when its turn comes."""
        self._handed: asyncio.Future[bool] | None = None
        """The queued prompt told its turn came, until it resumes."""
        self._dropped = False
        """A cancel came while `_handed` had not resumed yet: it must not run."""
        self._steering: list[Content] = []

    def take(self) -> bool:
        """Take the session now if it is idle (no waiting); whether it was."""
        if self.busy:
            return False
        self.busy = True
        return True

    async def claim(self, acknowledge: Callable[[], Awaitable[None]]) -> bool:
        """Take the session for a turn, after the turns ahead when one runs (`acknowledge`
        tells the user it waits); False when a cancel dropped it first."""
        if self.take():
            return True
        if len(self._waiting) >= MAX_WAITING:
            raise QueueFull(
                f"{MAX_WAITING} prompts already wait in this session, the most it queues: "
                "send this one when the turn ends, or cancel the turn"
            )
        gate: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append(gate)
        try:
            await acknowledge()
            await gate
        except asyncio.CancelledError:
            if gate in self._waiting:
                self._waiting.remove(gate)
            elif self._took_over(gate):
                self.release()  # its turn came just as it was stopped: the next one's now
            raise
        return self._took_over(gate)

    def _took_over(self, gate: asyncio.Future[bool]) -> bool:
        """Whether the prompt of `gate` holds the session now: its turn came and no cancel
        came before it resumed (after one, the session goes to the next in line)."""
        if self._handed is not gate:
            return False
        self._handed = None
        if self._dropped:
            self._dropped = False
            self.release()
            return False
        return True

    def release(self) -> None:
        """A turn ended: the next queued prompt runs, else the session is idle."""
        while self._waiting:
            gate = self._waiting.pop(0)
            if not gate.done():
                gate.set_result(True)
                self._handed, self._dropped = gate, False
                return
        self.busy = False

    def steer(self, content: Content) -> bool:
        """Keep a message for the running turn's next model call; False when none runs."""
        if self.busy:
            if len(self._steering) >= MAX_WAITING:
                raise QueueFull(
                    f"{MAX_WAITING} messages already wait for the running turn's next model "
                    "call, the most it takes: send this one after that call, or cancel the turn"
                )
            self._steering.append(content)
        return self.busy

    def steered(self) -> list[Content]:
        """The messages steered in since last asked (now handed over)."""
        taken, self._steering = self._steering, []
        return taken

    def drop(self) -> None:
        """A cancel: the queued prompts are answered `cancelled`, steered messages dropped."""
        waiting, self._waiting = self._waiting, []
        for gate in waiting:
            if not gate.done():
                gate.set_result(False)
        self._dropped = self._handed is not None
        self._steering.clear()
