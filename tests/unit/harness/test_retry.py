"""RetryMiddleware's decisions: what is worth retrying, how long to wait, when to stop."""

from __future__ import annotations

import email.utils
import random
import time

import httpx
import pytest

from deepacp.config import RetryPolicy
from deepacp.errors import ProviderUnavailable
from deepacp.harness.middleware.retry import RetryMiddleware, backoff
from deepacp.harness.provider_errors import retry_after, transient


class StatusError(Exception):
    """An SDK-like HTTP error: a status, an error body, the response."""

    def __init__(self, status: int, kind: str | None = None, headers: dict | None = None):
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.body = {"type": "error", "error": {"type": kind}} if kind else None
        self.response = httpx.Response(status, headers=headers or {})


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (StatusError(429, "rate_limit_error"), "rate limited"),
        (StatusError(529, "overloaded_error"), "overloaded"),
        (StatusError(503), "overloaded"),
        (StatusError(500, "api_error"), "failing"),
        (StatusError(200, "overloaded_error"), "overloaded"),  # an error event mid-stream
        (httpx.ConnectError("refused"), "unreachable"),
        (ConnectionResetError(), "unreachable"),
    ],
)
def test_passing_failures_are_retried(error, reason):
    failure = transient(error)
    assert failure is not None and failure.reason == reason


@pytest.mark.parametrize(
    "error",
    [StatusError(400, "invalid_request_error"), StatusError(401), ValueError("a bug"), KeyError()],
)
def test_other_failures_are_not(error):
    assert transient(error) is None


def test_a_context_overflow_is_left_to_summarization():
    from langchain_core.exceptions import ContextOverflowError

    assert transient(ContextOverflowError("prompt is too long")) is None


def test_retry_after_in_seconds_milliseconds_or_as_a_date():
    assert retry_after(httpx.Response(429, headers={"retry-after": "7"})) == 7
    assert retry_after(httpx.Response(429, headers={"retry-after-ms": "250"})) == 0.25
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after(httpx.Response(429, headers={"retry-after": later})) <= 30
    assert retry_after(httpx.Response(429, headers={"retry-after": "soon"})) is None
    assert retry_after(httpx.Response(429)) is None


def test_backoff_doubles_with_jitter_up_to_the_cap():
    policy = RetryPolicy(attempts=8, initial_delay=2, max_delay=10)
    rng = random.Random(1)
    for retry, step in [(1, 2), (2, 4), (3, 8), (4, 10), (7, 10)]:
        waits = {backoff(policy, retry, rng) for _ in range(50)}
        assert all(step / 2 <= w <= step for w in waits)
        assert len(waits) > 1  # jittered, so clients do not retry in lockstep


async def test_the_middleware_tries_attempts_times_then_gives_up_in_one_line():
    calls = []

    async def handler(request):
        calls.append(request)
        raise StatusError(529, "overloaded_error")

    middleware = RetryMiddleware(RetryPolicy(attempts=3, initial_delay=0.01))
    with pytest.raises(ProviderUnavailable) as raised:
        await middleware.awrap_model_call("request", handler)
    assert len(calls) == 3
    assert str(raised.value) == (
        "the model provider is still overloaded (HTTP 529 overloaded_error) after 3 tries; "
        "try again later"
    )


async def test_a_retry_after_beyond_max_delay_gives_up_at_once():
    calls = []

    async def handler(request):
        calls.append(request)
        raise StatusError(429, "rate_limit_error", {"retry-after": "3600"})

    middleware = RetryMiddleware(RetryPolicy(attempts=5, max_delay=60))
    with pytest.raises(ProviderUnavailable, match="asks to wait 3600 s"):
        await middleware.awrap_model_call("request", handler)
    assert len(calls) == 1


async def test_a_request_the_provider_rejects_is_not_retried():
    calls = []

    async def handler(request):
        calls.append(request)
        raise StatusError(400, "invalid_request_error")

    with pytest.raises(StatusError):
        await RetryMiddleware(RetryPolicy(initial_delay=0.01)).awrap_model_call("r", handler)
    assert len(calls) == 1


def test_context_overflow_is_recognised_in_each_provider_shape():
    from langchain_core.exceptions import ContextOverflowError

    from deepacp.harness.provider_errors import context_overflow

    openai_style = StatusError(400)
    openai_style.body = {"message": "This model's maximum context length is 8k", "code": None}
    coded = StatusError(400)
    coded.body = {"message": "too long", "code": "context_length_exceeded"}
    anthropic_style = StatusError(400, "invalid_request_error")
    anthropic_style.body["error"]["message"] = "prompt is too long: 210000 tokens > 200000"
    for error in (ContextOverflowError("x"), openai_style, coded, anthropic_style):
        assert context_overflow(error)
    assert not context_overflow(StatusError(400, "invalid_request_error"))
    assert not context_overflow(StatusError(500, "api_error"))


def _refused() -> Exception:
    """An SDK's connection error over httpx's over the socket's, as the clients raise it."""
    try:
        try:
            try:
                raise ConnectionRefusedError(111, "Connection refused")
            except OSError as exc:
                raise OSError("All connection attempts failed") from ExceptionGroup("", [exc])
        except OSError as exc:
            raise httpx.ConnectError("All connection attempts failed") from exc
    except httpx.ConnectError as exc:
        try:
            raise RuntimeError("Connection error.") from exc
        except RuntimeError as outer:
            return outer


def test_a_refused_connection_gets_one_quick_retry_and_a_timeout_none():
    failure = transient(_refused())
    assert failure is not None
    assert (failure.reason, failure.detail, failure.tries) == (
        "unreachable",
        "connection refused",
        2,
    )
    assert failure.retry_after is not None and failure.retry_after <= 0.5
    read_timeout = httpx.ReadTimeout("timed out")
    assert transient(read_timeout) is None  # the server may still be working on it
    assert transient(TimeoutError()) is None
    connect_timeout = transient(httpx.ConnectTimeout("timed out"))
    assert connect_timeout is not None and connect_timeout.tries == 2  # nothing was sent


async def test_after_the_quick_retry_the_connection_error_itself_is_raised():
    calls = []
    error = _refused()

    async def handler(request):
        calls.append(request)
        raise error

    middleware = RetryMiddleware(RetryPolicy(attempts=5, initial_delay=0.01))
    with pytest.raises(RuntimeError) as raised:
        await middleware.awrap_model_call("request", handler)
    assert raised.value is error and len(calls) == 2


@pytest.mark.parametrize(
    ("message", "sizes"),
    [
        (
            "request (3654 tokens) exceeds the available context size (2048 tokens), try",
            (2048, 3654),
        ),
        (
            "This model's maximum context length is 2048 tokens. However, you requested 3754 "
            "tokens (3654 in the messages, 100 in the completion).",
            (2048, 3654),
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 4200 "
            "tokens (3000 in the messages, 1200 in the completion).",
            (4096, 3000),
        ),
        (
            "This model's maximum context length is 2048 tokens. However, your request has "
            "3654 input tokens. Please reduce the length of the input messages.",
            (2048, 3654),
        ),
        (
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130001 tokens.",
            (128000, 130001),
        ),
        (
            "Trying to keep the first 3654 tokens when context the overflows. However, the model "
            "is loaded with context length of only 2048 tokens, which is not enough.",
            (2048, 3654),
        ),
        ("Cannot truncate prompt with n_keep (3654) >= n_ctx (2048)", (2048, 3654)),
    ],
)
def test_context_overflows_are_read_with_their_sizes(message, sizes):
    from deepacp.harness.overflow import context_overflow, context_sizes, overflow_line

    error = StatusError(400)
    error.body = {"error": {"message": message, "type": "invalid_request_error"}}
    assert context_overflow(error) and transient(error) is None
    assert context_sizes(error) == sizes
    line = overflow_line(error)
    context, prompt = sizes
    assert f"context ({context:,} tokens)" in line and f"prompt ({prompt:,} tokens)" in line
    assert ("is smaller than" in line) == (prompt >= context)
