"""One turn at a time: prompts that arrive while a turn runs wait in order (queued), and
messages steered into the running turn wait for its next model call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Content = str | list[dict]


class TurnQueue:
    def __init__(self) -> None:
        self.busy = False
        """A turn runs, or a queued prompt is taking over from one."""
        self._waiting: list[asyncio.Future[bool]] = []
        """The queued prompts, in order; each is told when its turn comes."""
        self._steering: list[Content] = []

    async def claim(self, acknowledge: Callable[[], Awaitable[None]]) -> bool:
        """Take the session for a turn, after the turns ahead when one runs (`acknowledge`
        tells the user it waits); False when a cancel dropped it first."""
        if not self.busy:
            self.busy = True
            return True
        gate: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append(gate)
        try:
            await acknowledge()
            return await gate
        except asyncio.CancelledError:
            if gate.done() and not gate.cancelled() and gate.result():
                self.release()  # its turn came just as it was stopped: the next one's now
            elif gate in self._waiting:
                self._waiting.remove(gate)
            raise

    def release(self) -> None:
        """A turn ended: the next queued prompt runs, else the session is idle."""
        while self._waiting:
            gate = self._waiting.pop(0)
            if not gate.done():
                gate.set_result(True)
                return
        self.busy = False

    def steer(self, content: Content) -> bool:
        """Keep a message for the running turn's next model call; False when none runs."""
        if self.busy:
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
        self._steering.clear()
