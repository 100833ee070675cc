"""RetryMiddleware: a model call that failed for a passing reason is tried again.

Passing reasons are rate limits (429), overload (529, 503), server errors (5xx), dropped
connections, and the same errors arriving mid-stream; a connection never made (refused, no
such host) gets one quick retry and then ends the run with its own error, and a timeout
waiting for the answer is never retried (see `deepacp.harness.provider_errors`). Waits grow
exponentially from `initial_delay` with jitter (each wait is drawn between half and all of
its step), and a `retry-after` the provider sends is honoured as given. Before each wait a
`ModelRetrySignal` goes to the run's `custom` stream, so the user sees why nothing
happens; a cancel during the wait stops the run at once. After the last try the run ends
with `ProviderUnavailable`, one line saying what the provider kept answering.

The provider clients deepacp makes (`deepacp.models`) have their own retries off, so the
provider sees exactly `attempts` requests; give a model you make yourself `max_retries=0`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from deepacp.config import RetryPolicy
from deepacp.errors import ProviderUnavailable
from deepacp.harness.contracts import ModelRetrySignal
from deepacp.harness.provider_errors import transient


def backoff(policy: RetryPolicy, retry: int, rng: random.Random) -> float:
    """The wait before retry number `retry` (1 for the first): doubling, with jitter."""
    step = min(policy.max_delay, policy.initial_delay * 2 ** (retry - 1))
    return rng.uniform(step / 2, step)


def _signal(signal: ModelRetrySignal) -> None:
    try:
        from langgraph.config import get_stream_writer

        get_stream_writer()(signal)
    except RuntimeError:
        pass  # not inside a graph run: nobody to tell


class RetryMiddleware(AgentMiddleware):
    """Retries model calls that failed for a passing reason (see the module docstring)."""

    def __init__(self, policy: RetryPolicy | None = None, *, rng: random.Random | None = None):
        super().__init__()
        self.policy = policy or RetryPolicy()
        self.rng = rng or random.Random()

    def _next_wait(self, exc: Exception, attempt: int) -> float:
        """The wait before the try after `attempt`, or raise: not passing, or no tries left."""
        failure = transient(exc)
        if failure is None:
            raise exc
        attempts = min(self.policy.attempts, failure.tries or self.policy.attempts)
        if attempt >= attempts:
            if failure.tries is not None:
                raise exc  # its own words (the URL it could not reach) say more
            raise ProviderUnavailable(
                f"the model provider is still {failure.reason} ({failure.detail}) after "
                f"{attempts} {'try' if attempts == 1 else 'tries'}; try again later"
            ) from exc
        wait = failure.retry_after
        if failure.tries is not None and wait is not None:  # our own quick retry
            wait = min(wait, self.policy.max_delay)
        if wait is not None and wait > self.policy.max_delay:
            raise ProviderUnavailable(
                f"the model provider is {failure.reason} ({failure.detail}) and asks to wait "
                f"{wait:.0f} s, longer than retry.max_delay ({self.policy.max_delay:g} s); "
                "try again later"
            ) from exc
        if wait is None:
            wait = backoff(self.policy, attempt, self.rng)
        if failure.tries is None:  # our own quick retry needs no word
            _signal(ModelRetrySignal(failure.reason, wait, attempt + 1, attempts))
        return wait

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        attempt = 1
        while True:
            try:
                return handler(request)
            except Exception as exc:
                time.sleep(self._next_wait(exc, attempt))
                attempt += 1

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        attempt = 1
        while True:
            try:
                return await handler(request)
            except Exception as exc:
                await asyncio.sleep(self._next_wait(exc, attempt))
                attempt += 1
