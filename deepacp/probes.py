"""One cheap request to a model server, for `deepacp setup`: does this key work, and which
models does this local server serve?

A hosted provider's key is checked by listing its models (`GET /v1/models` at Anthropic and
OpenAI, at the base URL in effect), which costs nothing. A local server is Ollama when it
answers `GET /api/tags`, else an OpenAI-compatible server (llama.cpp, LM Studio, vLLM) when
it answers `GET /v1/models`. Failures are one line a user reads; a key is never in them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from deepacp.models import PROVIDERS, Endpoint, endpoint
from deepacp.secrets import redact, secret_values

TIMEOUT = 10.0
ANTHROPIC_VERSION = "2023-06-01"
OLLAMA_URL = PROVIDERS["ollama"].default_url


class KeyRefused(Exception):
    """The provider answered, and refused the key (HTTP 401 or 403)."""


class NotChecked(Exception):
    """No answer that says whether the key or server works: unreachable, or a surprise."""


@dataclass(frozen=True)
class LocalServer:
    provider: str
    """`ollama`, or `openai` for an OpenAI-compatible server."""
    base_url: str
    """What `[providers.PROVIDER] base_url` is set to."""
    models: tuple[str, ...]


def check_key(provider: str, key: str) -> tuple[str, ...]:
    """The models `provider` lists for `key`; `KeyRefused` or `NotChecked` otherwise."""
    where = endpoint(provider)
    if where is None or provider not in ("anthropic", "openai"):
        raise NotChecked(f"deepacp cannot check a key for {provider}")
    url = where.url.rstrip("/")
    if provider == "anthropic":
        url += "/v1/models"
        headers = {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
    else:
        url += "/models"
        headers = {"authorization": f"Bearer {key}"}
    try:
        status, body = _get(url, headers, _named(where))
    except NotChecked as exc:
        raise NotChecked(redact(str(exc), [key, *secret_values()])) from None
    said = redact(_message(body, status), [key, *secret_values()])
    if status in (401, 403):
        raise KeyRefused(f"the key was refused by {provider}: {said}")
    if status != 200:
        raise NotChecked(f"{_shown(url)} ({where.source}) answered HTTP {status}: {said}")
    return _model_ids(body)


def local_server(url: str) -> LocalServer:
    """What serves at `url` (Ollama first), with its models; `NotChecked` when nothing does."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = f"http://{url}"
    if not url.endswith("/v1"):
        status, body = _get(f"{url}/api/tags", {}, url)
        if status == 200 and isinstance(body, dict) and isinstance(body.get("models"), list):
            names = (m.get("name") for m in body["models"] if isinstance(m, dict))
            return LocalServer("ollama", url, tuple(n for n in names if isinstance(n, str)))
        url += "/v1"
    status, body = _get(f"{url}/models", {}, url)
    if status != 200:
        raise NotChecked(
            f"{url}/models answered HTTP {status}: {_message(body, status)} "
            "(neither Ollama nor an OpenAI-compatible server?)"
        )
    return LocalServer("openai", url, _model_ids(body))


def _named(where: Endpoint) -> str:
    return f"{_shown(where.url)} ({where.source})"


def _shown(url: str) -> str:
    """`url` without a user name or password in it."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _get(url: str, headers: dict[str, str], named: str) -> tuple[int, Any]:
    """Status and JSON body (None when not JSON) of `GET url`; `NotChecked` when no answer."""
    import httpx

    try:
        response = httpx.get(url, headers=headers, timeout=TIMEOUT)
    except httpx.TimeoutException:
        raise NotChecked(f"no answer from {named} within {TIMEOUT:.0f} s") from None
    except httpx.HTTPError as exc:
        reason = str(exc.__cause__ or exc) or type(exc).__name__
        if "Connection refused" in reason:
            reason = "connection refused"
        raise NotChecked(f"cannot reach {named}: {reason}") from None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None


def _message(body: Any, status: int) -> str:
    """The error message in an Anthropic or OpenAI error body, as one line."""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return " ".join(str(message or f"HTTP {status}").split())[:300]


def _model_ids(body: Any) -> tuple[str, ...]:
    data = body.get("data") if isinstance(body, dict) else None
    items = data if isinstance(data, list) else []
    return tuple(m["id"] for m in items if isinstance(m, dict) and isinstance(m.get("id"), str))
