"""Where deepacp keeps its state, and the user's config file (`$DEEPACP_HOME/config.toml`).

config.toml keys (all optional)::

    model = "anthropic:claude-sonnet-4-5"        # the default model spec
    models = ["anthropic:claude-sonnet-4-5", "openai:gpt-5.1"]   # offered in model pickers
    sandbox = "workspace-write"   # or "workspace-write+network", "read-only", "off"
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from deepacp.errors import ConfigError

if TYPE_CHECKING:  # the backends load after `initialize` is answered
    from deepacp.backends.sandbox import SandboxPolicy


def deepacp_home() -> Path:
    """`$DEEPACP_HOME`, else `~/.deepacp`."""
    value = os.environ.get("DEEPACP_HOME")
    return Path(value).expanduser() if value else Path.home() / ".deepacp"


@dataclass(frozen=True)
class ServerOptions:
    """Command-line choices that shape every session a server opens."""

    model: str | None = None
    """The --model flag (None: DEEPACP_MODEL, then config.toml)."""
    planning: bool = True
    """Offer write_todos, which editors show as a plan (--no-plan turns it off)."""
    sandbox: SandboxPolicy | None = None
    """The --sandbox flag (None: config.toml, then the default)."""


@dataclass(frozen=True)
class UserConfig:
    model: str | None = None
    models: tuple[str, ...] = field(default_factory=tuple)
    sandbox: SandboxPolicy | None = None


def load_config(home: Path | None = None) -> UserConfig:
    """Read config.toml; a missing file is an empty config, a broken one a `ConfigError`."""
    path = (home or deepacp_home()) / "config.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return UserConfig()
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    model = data.get("model")
    models = data.get("models", [])
    if model is not None and not isinstance(model, str):
        raise ConfigError(
            f"{path}: 'model' must be a string such as \"anthropic:claude-sonnet-4-5\""
        )
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ConfigError(f"{path}: 'models' must be a list of model spec strings")
    from deepacp.backends.sandbox import POLICIES, parse_policy

    try:
        sandbox = None if "sandbox" not in data else parse_policy(data["sandbox"])
    except ValueError:
        raise ConfigError(f"{path}: 'sandbox' must be one of {', '.join(POLICIES)}") from None
    return UserConfig(model=model, models=tuple(models), sandbox=sandbox)


def sandbox_policy(flag: SandboxPolicy | None, home: Path | None = None) -> SandboxPolicy:
    """The sandbox policy sessions start with: the flag, else config.toml, else the default."""
    from deepacp.backends.sandbox import DEFAULT_POLICY

    return flag or load_config(home).sandbox or DEFAULT_POLICY
