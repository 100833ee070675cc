"""What a model server on a base URL the user set says about itself: its context length,
whether its chat template takes tools, and the model's name (`ServerFacts`).

Asked once per base URL and model for the process (`facts_for`), with a short timeout, off
the event loop (`afacts_for`), in the words of each server:

- llama.cpp's server: `GET /props` (`default_generation_settings.n_ctx`,
  `chat_template_caps.supports_tools`, `model_path`);
- Ollama: `POST /api/show` (`model_info`'s `*.context_length`, `capabilities` with "tools");
- vLLM and others: `GET /v1/models` (`max_model_len`, `id`); LM Studio:
  `GET /api/v0/models` (`loaded_context_length`, `max_context_length`).

A server that answers none of them (a hosted API, a proxy) has no facts: None, never an error.
Light to import (the standard library's HTTP client, no LangChain).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

TIMEOUT = 2.0
"""Seconds each question may take: a local server answers at once, even mid-prompt."""
MAX_BODY = 1 << 20
CONTEXT_KEYS = ("loaded_context_length", "max_model_len", "context_length", "max_context_length")
"""Where a `/v1/models` entry puts its context length (LM Studio's loaded one first)."""


@dataclass(frozen=True)
class ServerFacts:
    """What the server said; None where it did not say."""

    url: str
    context_length: int | None = None
    tools_supported: bool | None = None
    model_name: str | None = None

    @property
    def local(self) -> bool:
        """Whether the server runs on this machine (a small context then calls for the
        compact profile: `choose_profile` reads `local` and `context`)."""
        from deepacp.models import is_local

        return is_local(self.url)

    @property
    def context(self) -> int | None:
        return self.context_length


def tools_dropped_line(facts: ServerFacts) -> str:
    """What a user reads when the server leaves the tool definitions out of the prompt."""
    return (
        f"the server at {facts.url} drops tool definitions (its chat template has no tools): "
        "deepacp cannot edit files or run commands with this model"
    )


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _ask(url: str, key: str | None, body: dict[str, Any] | None = None) -> Any:
    """The JSON `url` answers (POST `body` when given), or None: no answer, not JSON."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Accept", "application/json")
    if data:
        request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return json.loads(response.read(MAX_BODY))
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise _Silent from None
        return None
    except TimeoutError:
        raise _Silent from None
    except (OSError, ValueError, RecursionError, http.client.HTTPException):
        return None  # refused, closed, not JSON or nested too deep


class _Silent(Exception):
    """The server let a question's whole timeout pass without an answer: it would let the
    next ones pass too, and the session waits for what it says."""


def _llama_cpp(url: str, props: Any) -> ServerFacts | None:
    if not isinstance(props, dict) or "default_generation_settings" not in props:
        return None
    settings = props.get("default_generation_settings") or {}
    caps = props.get("chat_template_caps")
    tools: bool | None = None
    if isinstance(caps, dict) and "supports_tools" in caps:
        tools = bool(caps["supports_tools"])
    elif isinstance(template := props.get("chat_template"), str) and template:
        tools = "tools" in template  # older servers: the template itself
    name = props.get("model_alias") or props.get("model_path")
    return ServerFacts(
        url,
        _number(settings.get("n_ctx") if isinstance(settings, dict) else None),
        tools,
        name if isinstance(name, str) else None,
    )


def _ollama(url: str, show: Any, model: str) -> ServerFacts | None:
    if not isinstance(show, dict) or not ({"model_info", "capabilities"} & show.keys()):
        return None
    info = show.get("model_info") or {}
    lengths = [v for k, v in info.items() if k.endswith(".context_length")] if info else []
    capabilities = show.get("capabilities")
    tools = "tools" in capabilities if isinstance(capabilities, list) else None
    return ServerFacts(url, _number(lengths[0]) if lengths else None, tools, model)


def _listed(url: str, listing: Any, model: str) -> ServerFacts | None:
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == model), None)
    if entry is None and len(entries) == 1:
        entry = entries[0]
    if entry is None:
        return None
    meta = entry.get("meta")
    lengths = [entry.get(k) for k in CONTEXT_KEYS]
    lengths.append(meta.get("n_ctx") if isinstance(meta, dict) else None)  # llama.cpp
    length = next((n for n in map(_number, lengths) if n), None)
    name = entry.get("id")
    if length is None:
        return None
    return ServerFacts(url, length, None, name if isinstance(name, str) else model)


def probe(url: str, model: str, key: str | None = None) -> ServerFacts | None:
    """Ask the server at the OpenAI-compatible base `url` (or Ollama's) what it is."""
    root = url.rstrip("/").removesuffix("/v1")
    try:
        if facts := _llama_cpp(url, _ask(f"{root}/props", key)):
            return facts
        if facts := _ollama(url, _ask(f"{root}/api/show", key, {"model": model}), model):
            return facts
        for listing in (f"{root}/v1/models", f"{root}/api/v0/models"):
            if facts := _listed(url, _ask(listing, key), model):
                return facts
    except _Silent:  # one timeout, not four
        log.info("the server at %s did not answer within %s s", url, TIMEOUT)
    return None


_known: dict[tuple[str, str], ServerFacts | None] = {}
_asking = threading.Lock()


def cached(url: str, model: str) -> ServerFacts | None:
    """The facts already known for `url` and `model` (never asks)."""
    return _known.get((url, model))


def facts_for(spec: str) -> ServerFacts | None:
    """The facts of the server behind the model `spec`, asked once for the process; None for
    a hosted API (no base URL set) or a server that does not say."""
    from deepacp.errors import ConfigError
    from deepacp.models import PROVIDERS, api_key, endpoint, served_locally, split_spec

    try:
        provider, model = split_spec(spec)
        where = endpoint(provider) if served_locally(provider) else None
    except ConfigError:
        return None
    if where is None:
        return None
    with _asking:  # one question per server, however many sessions open at once
        if (where.url, model) not in _known:
            variable = PROVIDERS[provider].key_env
            facts = probe(where.url, model, api_key(variable) if variable else None)
            log.info("the server at %s says: %s", where.url, facts)
            _known[(where.url, model)] = facts
        return _known[(where.url, model)]


async def afacts_for(spec: str) -> ServerFacts | None:
    """`facts_for` off the event loop, on a daemon thread: a server that never answers
    delays neither the turn nor the end of the process."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[ServerFacts | None] = loop.create_future()

    def ask() -> None:
        try:
            facts: ServerFacts | None = facts_for(spec)
        except Exception:
            log.exception("could not ask the model's server what it supports")
            facts = None
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
            loop.call_soon_threadsafe(settle, facts)

    def settle(facts: ServerFacts | None) -> None:
        if not answer.done():  # not cancelled meanwhile
            answer.set_result(facts)

    threading.Thread(target=ask, name="server-facts", daemon=True).start()
    return await answer
