"""What a model provider's error means, read the same way for every provider: a passing
failure worth retrying (`transient`), how long the provider asks to wait (`retry_after`),
or a request too long for the model's context (`context_overflow`).

The provider SDKs are optional, so their errors are read by what each of them carries:
LangChain's `ModelError` classes (`is_retryable`, `ContextOverflowError`), an HTTP
`status_code`, a JSON error `body`, the `response` headers.
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import (
    ContextOverflowError,
    ModelConnectionError,
    ModelError,
    ModelRateLimitError,
    ModelTimeoutError,
)

RATE_LIMITED, OVERLOADED, SERVER_ERROR, UNREACHABLE = (
    "rate limited",
    "overloaded",
    "failing",
    "unreachable",
)
STATUS_REASONS = {
    408: SERVER_ERROR,
    409: SERVER_ERROR,
    429: RATE_LIMITED,
    503: OVERLOADED,
    529: OVERLOADED,  # Anthropic's overloaded_error
}
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
    """How `exc` is a passing failure, or None when trying again would not help."""
    if context_overflow(exc) or not isinstance(exc, Exception):
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
    if isinstance(exc, ModelConnectionError | ModelTimeoutError) or _is_connection_error(exc):
        return Transient(UNREACHABLE, detail, wait)
    if isinstance(exc, ModelRateLimitError):
        return Transient(RATE_LIMITED, detail, wait)
    if isinstance(exc, ModelError) and exc.is_retryable:
        return Transient(SERVER_ERROR, detail, wait)
    return None


OVERFLOW_CODES = frozenset({"context_length_exceeded"})
OVERFLOW_PHRASES = ("prompt is too long", "maximum context length", "exceeds the context window")


def context_overflow(exc: BaseException) -> bool:
    """Whether `exc` says the request does not fit the model's context window.

    LangChain's clients classify most of these as `ContextOverflowError`, but not all: with
    the current OpenAI SDK, Chat Completions' `context_length_exceeded` arrives as a plain
    invalid request (the code is in the error body, not in the text LangChain looks at).
    """
    if isinstance(exc, ContextOverflowError):
        return True
    if getattr(exc, "status_code", None) not in (400, 413):
        return False
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and inner.get("code") in OVERFLOW_CODES:
        return True
    text = str(inner.get("message") if isinstance(inner, dict) else exc).lower()
    return any(phrase in text for phrase in OVERFLOW_PHRASES)
