"""How `deepacp --stdio` ends: at the first of SIGTERM, SIGINT, SIGHUP or the end of its
input, once, whole, and within two seconds.

An editor that quits often closes stdin and sends SIGTERM at once. The first of them stops
the serving; the shutdown that follows (turns cancelled and repaired, sessions saved, MCP
servers and commands ended, the store closed) runs to its end whatever comes meanwhile: a
signal then is logged, not delivered as a second cancel into the middle of the shutdown
(which left the store open, and its database thread, not a daemon, held the process for
good). The shutdown has `SHUTDOWN_SECONDS`; then the process exits at once, without the
interpreter's teardown, which takes a second under load once LangChain is loaded and waits
for any thread a library left running. Whatever deepacp started dies with it
(`deepacp.backends.shell.lifeline`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NoReturn

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
SHUTDOWN_SECONDS = 1.5
"""How long the shutdown may take, from the first signal or the end of input."""


class Lifetime:
    """The process's one ending. `run` serves until the input ends or a signal comes;
    `end` runs the shutdown, bounded, with signals no longer cancelling anything."""

    def __init__(self) -> None:
        self._serving: asyncio.Task | None = None
        """What the first signal cancels (None: the shutdown has begun)."""
        self._deadline: float | None = None

    def run(self, serve: Callable[[Lifetime], Awaitable[None]]) -> NoReturn:
        """Run `serve(self)` on a new event loop, then exit the process; what `serve`
        raises is raised here (the command line reports it). The loop is never closed:
        what is left on it ends with the process."""
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.run_until_complete(self._main(serve))
        exit_now(0)

    async def _main(self, serve: Callable[[Lifetime], Awaitable[None]]) -> None:
        self._serving = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            loop.add_signal_handler(sig, self._signalled, sig)
        try:
            await serve(self)
        except asyncio.CancelledError:  # a signal before there was anything to shut down
            pass

    def _signalled(self, sig: signal.Signals) -> None:
        if self._serving is None:
            log.info("%s during the shutdown: it goes on", sig.name)
            return
        log.info("%s: shutting down", sig.name)
        self._begin()
        self._serving.cancel()
        self._serving = None

    def _begin(self) -> None:
        if self._deadline is None:
            self._deadline = asyncio.get_running_loop().time() + SHUTDOWN_SECONDS

    async def end(self, shutdown: Coroutine[Any, Any, None]) -> None:
        """Run `shutdown` to its end or until the time is up (then what is left is
        abandoned, and the process exits without it); a signal meanwhile changes nothing."""
        self._serving = None
        self._begin()
        assert self._deadline is not None
        task = asyncio.ensure_future(shutdown)
        remaining = max(0.0, self._deadline - asyncio.get_running_loop().time())
        done, _ = await asyncio.wait({task}, timeout=remaining)
        if not done:
            log.warning("the shutdown took over %g s: exiting without the rest", SHUTDOWN_SECONDS)
        elif (failure := task.exception()) is not None:
            log.error("the shutdown failed: %s", failure, exc_info=failure)


def exit_now(code: int) -> NoReturn:
    """Flush the logs and the standard streams, and end the process."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the editor closed it, or it was closed here
            pass
    os._exit(code)
