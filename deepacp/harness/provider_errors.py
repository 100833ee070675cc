"""What a model provider's error means, read the same way for every provider: a passing
failure worth retrying (`transient`), how long the provider asks to wait (`retry_after`),
a request too long for the model's context (`context_overflow`, from
`deepacp.harness.overflow`), or a cause the user can
fix, as one line naming the fix (`explain`: a refused key, an unknown model, a server that
cannot be reached or does not answer, a prompt larger than the model's context).

No connection made (refused, no such host) is worth one quick retry, not five. A timeout
waiting for the server is never retried: the server may still be working on the request
(a local one reading a long prompt), and sending it again only queues a second copy.

The provider SDKs are optional, so their errors are read by what each of them carries:
LangChain's `ModelError` classes (`is_retryable`, `ContextOverflowError`), an HTTP
`status_code`, a JSON error `body`, the `response` headers.
"""

from __future__ import annotations

import email.utils
import errno
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from langchain_core.exceptions import (
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)

from deepacp.harness.overflow import context_overflow, overflow_line, server_words

if TYPE_CHECKING:
    from deepacp.models import Endpoint

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
QUICK_RETRY = 0.5
"""Seconds before the one retry a connection that was never made gets."""
NOT_CONNECTED_TRIES = 2


@dataclass(frozen=True)
class Transient:
    """Why a failed call may succeed later, and what the provider said."""

    reason: str
    detail: str
    retry_after: float | None = None
    tries: int | None = None
    """The most tries worth making (None: as the retry policy says); after them the error
    itself is raised, since it says more than "try again later"."""


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


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, its causes and contexts, and the members of exception groups among them."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        link = todo.pop()
        if id(link) in seen:
            continue
        seen.add(id(link))
        yield link
        todo.extend(e for e in (link.__cause__, link.__context__) if e is not None)
        todo.extend(getattr(link, "exceptions", None) or ())


def _httpx_error(name: str) -> type[BaseException] | tuple[()]:
    try:
        import httpx
    except ImportError:
        return ()
    return getattr(httpx, name, ())


def not_connected(exc: BaseException) -> str | None:
    """Why no connection to the server was made ("connection refused"), or None: one was
    made (or it is not that kind of error)."""
    connect_error, connect_timeout = _httpx_error("ConnectError"), _httpx_error("ConnectTimeout")
    reason = None
    for link in _chain(exc):
        if isinstance(link, socket.gaierror):
            return "the host name is not known"
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, OSError) and link.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "no route to the host"
        if isinstance(link, connect_timeout):
            reason = reason or "no connection within the time allowed"
        elif isinstance(link, connect_error):
            reason = reason or f"cannot connect ({_first_line(link) or type(link).__name__})"
    return reason


def timed_out(exc: BaseException) -> bool:
    """Whether `exc` is a wait for the server's answer that ran out (its request sent)."""
    if not_connected(exc):
        return False
    waits = (TimeoutError, ModelTimeoutError, _httpx_error("TimeoutException"))
    return any(isinstance(link, waits) for link in _chain(exc))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


def transient(exc: BaseException) -> Transient | None:
    """How `exc` is a passing failure, or None when trying again would not help."""
    if context_overflow(exc) or not isinstance(exc, Exception):
        return None
    if reason := not_connected(exc):
        return Transient(UNREACHABLE, reason, QUICK_RETRY, NOT_CONNECTED_TRIES)
    if timed_out(exc):
        return None  # the server may still be at work on it: never send it twice
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


def _shown(url: str) -> str:
    """`url` without a user name or password in it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and status > 0 else None


def explain(exc: BaseException, where: Endpoint, model: str) -> str | None:
    """One line saying what went wrong with `model` at `where` and how to fix it, or None
    when `exc` is not something a user can fix (a bug, an outage)."""
    url, status = _shown(where.url), _status(exc)
    name = where.provider
    if isinstance(exc, ModelAuthenticationError) or status == 401:
        if where.key_env:
            return (
                f"the API key for {name} was refused: check {where.key_env} or run `deepacp setup`"
            )
        return f"{url} refused the request (HTTP 401, {where.source}): check the server's key"
    if isinstance(exc, ModelPermissionDeniedError) or status == 403:
        return f"the API key for {name} may not use '{model}' (HTTP 403): check --model or the key"
    if isinstance(exc, ModelNotFoundError) or status == 404:
        words = server_words(exc).lower()
        if "model" in words or (model and model.lower() in words):
            return f"no model '{model}' at {name}: check --model"
        return f"nothing answers at {url} (HTTP 404, {where.source}): check the base URL"
    if reason := not_connected(exc):
        return f"cannot reach {url} ({where.source}): {reason}"
    if timed_out(exc):
        return (
            f"no answer from {url} after {where.first_token_timeout:g} s (the server may still "
            f"be reading a long prompt): to wait longer, set {where.timeout_source}"
        )
    if context_overflow(exc):
        from deepacp.server_facts import cached  # what the server said of itself, if asked

        facts = cached(where.url, model)
        return overflow_line(exc, context=facts.context_length if facts else None)
    return None
