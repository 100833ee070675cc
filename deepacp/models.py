"""Model specs: `provider:model` for any LangChain chat model, `scripted:PATH` offline.

Which model: the `--model` flag, else `DEEPACP_MODEL`, else `model` in
`$DEEPACP_HOME/config.toml`. Provider packages are optional extras imported only when asked
for; a missing package or API key is one readable `ModelConfigError` line. A provider's
key is its environment variable, else the key `deepacp setup` stored (the variable wins).
`openai:` honours `OPENAI_BASE_URL`, which is how OpenAI-compatible local servers are used.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deepacp.config import load_config
from deepacp.errors import ConfigError, ModelConfigError
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


PROVIDERS = {
    "anthropic": Provider(
        "langchain_anthropic", "anthropic", "ANTHROPIC_API_KEY", "claude-sonnet-4-5"
    ),
    "openai": Provider("langchain_openai", "openai", "OPENAI_API_KEY", "gpt-5.1"),
    "ollama": Provider("langchain_ollama", "ollama", None, "qwen3-coder"),
}


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
    if info.key_env and not api_key(info.key_env):
        raise ModelConfigError(
            f"model {spec!r} needs an API key: set {info.key_env} or run `deepacp setup`"
        )


def resolve_model(spec: str) -> BaseChatModel:
    """Turn a spec string into a chat model instance."""
    provider, name = split_spec(spec)
    if provider == SCRIPTED:
        from deepacp.testing import ScriptedChatModel

        return ScriptedChatModel.from_file(name)
    check_provider(spec)
    from langchain.chat_models import init_chat_model

    info = PROVIDERS.get(provider)
    key = api_key(info.key_env) if info and info.key_env else None
    extra: dict[str, Any] = {"api_key": key} if key else {}
    try:
        return init_chat_model(name, model_provider=provider, **extra)
    except ImportError as exc:
        raise ModelConfigError(f"model {spec!r}: {exc}") from None
    except ValueError as exc:
        raise ModelConfigError(f"model {spec!r}: {str(exc).splitlines()[0]}") from None
