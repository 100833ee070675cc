"""Model specs: `provider:model` for any LangChain chat model, `scripted:PATH` offline.

Which model: the `--model` flag, else `DEEPACP_MODEL`, else `model` in
`$DEEPACP_HOME/config.toml`. Provider packages are optional extras imported only when asked
for; a missing package or API key is one readable `ModelConfigError` line. A provider's
key is its environment variable, else the key `deepacp setup` stored (the variable wins).
A provider's base URL is its variable (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL` — how
OpenAI-compatible local servers are used — `OLLAMA_HOST`), else `[providers.NAME] base_url`
in config.toml; an OpenAI-compatible server on this machine needs no key. The clients' own
retries are off: the harness retries (and says so). Every model gets an output cap (see
`deepacp.output_cap`).

How long a model call may wait for the server's next bytes (the first token above all, while
a local server reads a long prompt): `DEEPACP_FIRST_TOKEN_TIMEOUT`, else
`[providers.NAME] first_token_timeout`, else 300 s, or 900 s for a server on this machine.
A call that times out is reported, never sent again (`deepacp.harness.provider_errors`).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from deepacp.config import Effort, load_config
from deepacp.effort import effort_options, with_answer_room
from deepacp.errors import ConfigError, ModelConfigError
from deepacp.output_cap import with_output_cap
from deepacp.secrets import register_secrets

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

SCRIPTED = "scripted"


@dataclass(frozen=True)
class Provider:
    package: str
    extra: str
    key_env: str | None
    default_model: str
    """The model `deepacp setup` configures when none is."""
    base_url_env: str | None = None
    default_url: str = ""
    """Where the provider's client sends requests when no base URL is set."""
    client_options: tuple[tuple[str, Any], ...] = ()
    """Constructor options for every model of the provider."""


NO_SDK_RETRIES = (("max_retries", 0),)  # RetryMiddleware retries, and tells the user
PROVIDERS = {
    "anthropic": Provider(
        "langchain_anthropic",
        "anthropic",
        "ANTHROPIC_API_KEY",
        "claude-sonnet-4-5",
        "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com",
        NO_SDK_RETRIES,
    ),
    "openai": Provider(
        "langchain_openai",
        "openai",
        "OPENAI_API_KEY",
        "gpt-5.1",
        "OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        (*NO_SDK_RETRIES, ("stream_usage", True)),  # usage is not streamed by default
    ),
    "ollama": Provider(
        "langchain_ollama", "ollama", None, "qwen3-coder", "OLLAMA_HOST", "http://127.0.0.1:11434"
    ),
}
FIRST_TOKEN_ENV = "DEEPACP_FIRST_TOKEN_TIMEOUT"
FIRST_TOKEN_TIMEOUT = 300.0
LOCAL_FIRST_TOKEN_TIMEOUT = 900.0
"""A model on this machine may read a long prompt for minutes before its first token."""
CONNECT_TIMEOUT = 10.0
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


@dataclass(frozen=True)
class Endpoint:
    """Where a provider's requests go, and what a user reads in an error about them."""

    provider: str
    url: str
    source: str
    """Where `url` was set, as a user reads it: "from OPENAI_BASE_URL", "the default"."""
    key_env: str | None
    first_token_timeout: float
    timeout_source: str
    """Where `first_token_timeout` was set, or how to set it."""


def configured_spec(flag: str | None = None) -> str:
    """The model spec in effect, or a `ModelConfigError` naming what to set."""
    spec = flag or os.environ.get("DEEPACP_MODEL") or load_config().model
    if not spec:
        raise ModelConfigError(
            "no model configured: pass --model PROVIDER:MODEL, set DEEPACP_MODEL, or put "
            'model = "anthropic:claude-sonnet-4-5" in $DEEPACP_HOME/config.toml '
            "(try `deepacp demo` for an offline run)"
        )
    return spec


def key_variable(spec: str | None = None) -> str | None:
    """The API key variable the model in effect needs (Anthropic's when none is set yet)."""
    try:
        provider, _ = split_spec(spec or configured_spec())
    except ConfigError:
        return PROVIDERS["anthropic"].key_env
    info = PROVIDERS.get(provider)
    return info.key_env if info else None


def split_spec(spec: str) -> tuple[str, str]:
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ModelConfigError(
            f"model spec {spec!r} is not PROVIDER:MODEL (for example anthropic:claude-sonnet-4-5)"
        )
    return provider.strip().lower(), name.strip()


def api_key(variable: str) -> str | None:
    """The value of the key variable `variable`: from the environment, else stored."""
    if value := os.environ.get(variable):
        return value
    from deepacp.credentials import stored_key

    key = stored_key(variable)
    if key:
        register_secrets({variable: key}, {})  # redacted wherever text leaves us, like env keys
    return key


def check_provider(spec: str) -> None:
    """Raise `ModelConfigError` if `spec`'s provider package or API key is missing."""
    provider, _ = split_spec(spec)
    if provider == SCRIPTED:
        return
    info = PROVIDERS.get(provider)
    if info is None:
        return  # init_chat_model knows more providers; it reports its own problems
    if importlib.util.find_spec(info.package) is None:
        raise ModelConfigError(
            f"model {spec!r} needs the {info.extra} extra: pip install 'deepacp[{info.extra}]'"
        )
    if info.key_env and not api_key(info.key_env) and not _keyless(provider):
        raise ModelConfigError(
            f"model {spec!r} needs an API key: set {info.key_env} or run `deepacp setup`"
        )


def base_url(provider: str) -> str | None:
    """The API base URL for `provider`: its variable, else config.toml; None: the default."""
    info = PROVIDERS.get(provider)
    variable = info.base_url_env if info else None
    return (os.environ.get(variable) if variable else None) or load_config().base_urls.get(provider)


def _keyless(provider: str) -> bool:
    """Whether `provider` is an OpenAI-compatible server on this machine (it needs no key)."""
    return provider == "openai" and is_local(base_url(provider) or "")


def is_local(url: str) -> bool:
    """Whether `url` names a server on this machine (a model it runs may be slow to start)."""
    try:
        return (urlsplit(url if "://" in url else f"http://{url}").hostname or "") in LOCAL_HOSTS
    except ValueError:
        return False


def endpoint(provider: str) -> Endpoint | None:
    """Where `provider`'s requests go and how long they may wait (None: not one of ours)."""
    info = PROVIDERS.get(provider)
    if info is None:
        return None
    config = load_config()
    url, source = info.default_url, "the default"
    if info.base_url_env and (value := os.environ.get(info.base_url_env)):
        url, source = value, f"from {info.base_url_env}"
    elif value := config.base_urls.get(provider):
        url, source = value, f"from [providers.{provider}] base_url in config.toml"
    timeout, timeout_source = _first_token_timeout(provider, url, config.first_token_timeouts)
    return Endpoint(provider, url, source, info.key_env, timeout, timeout_source)


def _first_token_timeout(
    provider: str, url: str, configured: dict[str, float]
) -> tuple[float, str]:
    if value := os.environ.get(FIRST_TOKEN_ENV):
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not seconds > 0:
            raise ConfigError(
                f"{FIRST_TOKEN_ENV} must be a number of seconds above 0, not {value!r}"
            )
        return seconds, FIRST_TOKEN_ENV
    where = f"first_token_timeout under [providers.{provider}] in config.toml"
    if provider in configured:
        return configured[provider], where
    default = LOCAL_FIRST_TOKEN_TIMEOUT if is_local(url) else FIRST_TOKEN_TIMEOUT
    return default, f"{where} or {FIRST_TOKEN_ENV}"


def timeout_options(provider: str, seconds: float) -> dict[str, Any]:
    """The client options that bound a wait for the server's next bytes to `seconds`."""
    import httpx

    waits = httpx.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT))
    if provider == "openai":  # its stream timeout counts parsed chunks, not bytes
        return {"timeout": waits, "stream_chunk_timeout": seconds}
    if provider == "anthropic":
        return {"timeout": seconds}
    if provider == "ollama":
        return {"client_kwargs": {"timeout": waits}}
    return {}


def provider_options(provider: str) -> dict[str, Any]:
    """What every model of `provider` is made with: base URL, key, timeouts, client options."""
    info = PROVIDERS.get(provider)
    options: dict[str, Any] = dict(info.client_options) if info else {}
    if info and info.key_env and (key := api_key(info.key_env)):
        options["api_key"] = key
    elif _keyless(provider):
        options["api_key"] = "none"  # the server wants no key, its client wants one
    if url := base_url(provider):
        options["base_url"] = url
    if where := endpoint(provider):
        options |= timeout_options(provider, where.first_token_timeout)
    return options


def served_locally(provider: str) -> bool:
    """Whether `provider`'s models run on a server the user points at (an OpenAI-compatible
    base URL, or Ollama) rather than the hosted API."""
    return provider == "ollama" or (provider == "openai" and base_url(provider) is not None)


def resolve_model(spec: str, effort: Effort | None = None) -> BaseChatModel:
    """Turn a spec string into a chat model instance, reasoning at `effort` where the model
    can (None: config.toml's `effort`, else the provider's default; see `deepacp.effort`)."""
    provider, name = split_spec(spec)
    if provider == SCRIPTED:
        from deepacp.testing import ScriptedChatModel

        return ScriptedChatModel.from_file(name)
    check_provider(spec)
    from langchain.chat_models import init_chat_model

    config = load_config()
    effort = effort or config.effort
    options = provider_options(provider) | effort_options(provider, name, effort)
    try:
        model = init_chat_model(name, model_provider=provider, **options)
        capped = with_output_cap(model, config.max_tokens.get(provider), served_locally(provider))
        return with_answer_room(capped)
    except ImportError as exc:
        raise ModelConfigError(f"model {spec!r}: {exc}") from None
    except ValueError as exc:
        raise ModelConfigError(f"model {spec!r}: {str(exc).splitlines()[0]}") from None
