"""RetryMiddleware: a model call that failed for a passing reason is tried again.

Passing reasons are rate limits (429), overload (529, 503), server errors (5xx), dropped
connections and timeouts, and the same errors arriving mid-stream. Waits grow
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
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.exceptions import ContextOverflowError, ModelError

from deepacp.config import RetryPolicy
from deepacp.errors import ProviderUnavailable
from deepacp.harness.contracts import ModelRetrySignal

RATE_LIMITED, OVERLOADED, SERVER_ERROR, UNREACHABLE = (
    "rate limited",
    "overloaded",
    "failing",
    "unreachable",
)
STATUS_REASONS = {408: SERVER_ERROR, 409: SERVER_ERROR, 429: RATE_LIMITED, 503: OVERLOADED}
STATUS_REASONS |= {529: OVERLOADED}
ERROR_TYPE_REASONS = {
    "rate_limit_error": RATE_LIMITED,
    "overloaded_error": OVERLOADED,
    "api_error": SERVER_ERROR,
    "server_error": SERVER_ERROR,
    "timeout_error": SERVER_ERROR,
}
CONNECTION_ERRORS = (ConnectionError, TimeoutError)


@dataclass(frozen=True)
class Transient:
    """Why a failed call may succeed later, and what the provider said."""

    reason: str
    detail: str
    retry_after: float | None = None


def _error_type(body: Any) -> str | None:
    """The error `type` of an Anthropic or OpenAI error body (`{"error": {"type": ...}}`)."""
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    kind = inner.get("type") if isinstance(inner, dict) else None
    return kind if isinstance(kind, str) else None


def retry_after(response: Any) -> float | None:
    """Seconds the provider asks to wait (`retry-after-ms`, `retry-after` seconds or date)."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _is_connection_error(exc: BaseException) -> bool:
    if isinstance(exc, CONNECTION_ERRORS):
        return True
    try:
        import httpx
    except ImportError:
        return False
    return isinstance(exc, httpx.TransportError)


def transient(exc: BaseException) -> Transient | None:
    """How `exc` is a passing failure, or None when trying again would not help.

    The provider SDKs are optional, so their errors are read by what every one of them
    carries: LangChain's `ModelError.is_retryable`, an HTTP `status_code`, an error body.
    """
    if isinstance(exc, ContextOverflowError) or not isinstance(exc, Exception):
        return None
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) and status > 0 else None
    kind = _error_type(getattr(exc, "body", None))
    wait = retry_after(getattr(exc, "response", None))
    detail = " ".join(p for p in (f"HTTP {status}" if status else "", kind or "") if p)
    detail = detail or type(exc).__name__
    if status in STATUS_REASONS:
        return Transient(STATUS_REASONS[status], detail, wait)
    if status is not None and status >= 500:
        return Transient(SERVER_ERROR, detail, wait)
    if kind in ERROR_TYPE_REASONS and (status is None or status < 300):  # an error mid-stream
        return Transient(ERROR_TYPE_REASONS[kind], detail, wait)
    if (isinstance(exc, ModelError) and exc.is_retryable) or _is_connection_error(exc):
        return Transient(UNREACHABLE if status is None else SERVER_ERROR, detail, wait)
    return None


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

    name = "RetryMiddleware"

    def __init__(self, policy: RetryPolicy | None = None, *, rng: random.Random | None = None):
        super().__init__()
        self.policy = policy or RetryPolicy()
        self.rng = rng or random.Random()

    def _next_wait(self, exc: Exception, attempt: int) -> float:
        """The wait before the try after `attempt`, or raise: not passing, or no tries left."""
        failure = transient(exc)
        if failure is None:
            raise exc
        attempts = self.policy.attempts
        if attempt >= attempts:
            raise ProviderUnavailable(
                f"the model provider is still {failure.reason} ({failure.detail}) after "
                f"{attempts} {'try' if attempts == 1 else 'tries'}; try again later"
            ) from exc
        wait = failure.retry_after
        if wait is not None and wait > self.policy.max_delay:
            raise ProviderUnavailable(
                f"the model provider is {failure.reason} ({failure.detail}) and asks to wait "
                f"{wait:.0f} s, longer than retry.max_delay ({self.policy.max_delay:g} s); "
                "try again later"
            ) from exc
        if wait is None:
            wait = backoff(self.policy, attempt, self.rng)
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
