"""Where deepacp keeps its state, and the user's config file (`$DEEPACP_HOME/config.toml`).
Over 350 lines because every key is checked here, beside its one-line error.

config.toml keys (all optional)::

    model = "anthropic:claude-sonnet-4-5"        # the default model spec
    models = ["anthropic:claude-sonnet-4-5", "openai:gpt-5.1"]   # offered in model pickers
    effort = "medium"                            # reasoning effort: off, low, medium, high
    profile = "small-local"                      # the harness profile: auto (the default),
                                                 # default or small-local (DEEPACP_PROFILE wins)

    [providers.anthropic]                        # also openai, ollama
    base_url = "https://gateway.example.com"     # the provider's variable, if set, wins
    first_token_timeout = 300                    # seconds to wait for an answer (default
                                                 # 300, 900 for a local server;
                                                 # DEEPACP_FIRST_TOKEN_TIMEOUT wins)
    max_tokens = 8192                            # output cap per model call (default: 32,000,
                                                 # 8,192 for a server at a base URL or Ollama)

    [retry]                                      # failed model calls (429, 529, 5xx, drops)
    attempts = 5                                 # tries in all, the first included
    initial_delay = 2.0                          # seconds before the second try, then doubling
    max_delay = 60.0                             # longest wait; a longer retry-after gives up

    [prices."anthropic:claude-sonnet-4-5"]   # per million tokens; only shown where set
    currency = "USD"
    input = 3.0
    output = 15.0
    cache_read = 0.3      # default: the input price
    cache_write = 3.75    # default: the input price

    sandbox = "workspace-write"   # or "workspace-write+network", "read-only", "off"

    database = "postgresql://user:password@host:5432/deepacp"   # sessions in PostgreSQL
                                     # (DEEPACP_DATABASE_URL wins; default: SQLite in the home)
    verify = false                # do not ask the agent to run the project's checks
                                  # before it ends a turn that changed files
    [goal]                        # the /goal grader
    rounds = 3                    # gradings per turn at most (needs revision -> work again)

An unknown key, at the top or in a table, is refused with the nearest valid one.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from deepacp.errors import ConfigError
from deepacp.regular import read_regular

if TYPE_CHECKING:  # the backends load after `initialize` is answered
    from deepacp.backends.sandbox import SandboxPolicy

Effort = Literal["off", "low", "medium", "high"]
EFFORTS: tuple[Effort, ...] = ("off", "low", "medium", "high")
DATABASE_ENV = "DEEPACP_DATABASE_URL"
DATABASE_SCHEMES = ("postgresql://", "postgres://")


DEFAULT_REWIND_BUDGET = 256 * 2**20
"""Bytes of file copies restore points may keep in all (`[rewind] budget_mb`)."""
TOP_LEVEL_KEYS = frozenset(
    {"model", "models", "effort", "providers", "retry", "prices", "sandbox", "database"}
    | {"goal", "rewind", "verify", "profile"}
)
PROFILES = ("auto", "default", "small-local")
"""The harness profiles a user can choose: chosen from the model and its server, the full
harness, the compact one for small contexts (`deepacp.harness.profiles`)."""
PROVIDER_KEYS = frozenset({"base_url", "first_token_timeout", "max_tokens"})
PRICE_KEYS = frozenset({"input", "output", "cache_read", "cache_write", "currency"})
MAX_CONFIG_BYTES = 1 << 20
"""config.toml is read only if it is a regular file (a link to one is fine) this small."""


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
    remote: str | None = None
    """The --remote URL: every session works on that remote checkout (None: locally)."""
    server: str | None = None
    """The --server URL: sessions run on that LangGraph server (None: in this process)."""
    profile: str | None = None
    """The --profile flag (None: DEEPACP_PROFILE, then config.toml)."""


@dataclass(frozen=True)
class ModelPrices:
    """What a model's tokens cost, per million, as the user wrote them in config.toml."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    currency: str = "USD"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a model call that failed for a passing reason."""

    attempts: int = 5
    initial_delay: float = 2.0
    max_delay: float = 60.0


DEFAULT_GOAL_ROUNDS = 3
"""How many times the grader checks a turn's work against the goal, at most."""


@dataclass(frozen=True)
class UserConfig:
    model: str | None = None
    models: tuple[str, ...] = field(default_factory=tuple)
    prices: dict[str, ModelPrices] = field(default_factory=dict)
    """By model spec."""
    effort: Effort | None = None
    base_urls: dict[str, str] = field(default_factory=dict)
    """Provider name -> the API base URL to use (`[providers.NAME] base_url`)."""
    first_token_timeouts: dict[str, float] = field(default_factory=dict)
    """Provider name -> seconds to wait for an answer (`[providers.NAME] first_token_timeout`)."""
    max_tokens: dict[str, int] = field(default_factory=dict)
    """Provider name -> the output cap of each model call (`[providers.NAME] max_tokens`)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sandbox: SandboxPolicy | None = None
    goal_rounds: int = DEFAULT_GOAL_ROUNDS
    """`[goal] rounds`: gradings per turn at most."""
    database: str | None = None
    """A PostgreSQL URL: sessions live there, shared by every machine that names it."""
    rewind_budget: int = DEFAULT_REWIND_BUDGET
    """Bytes, from `[rewind] budget_mb`."""
    verify: bool = True
    """Ask the agent to run the project's checks before it ends a turn that changed files."""
    profile: str | None = None
    """The harness profile (`PROFILES`; None: auto)."""


def _prices(data: object, path: Path) -> dict[str, ModelPrices]:
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: 'prices' must be tables such as [prices.\"openai:gpt-5.1\"]")
    prices = {}
    for spec, table in data.items():
        where = f'{path}: [prices."{spec}"]'
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table of prices per million tokens")
        refuse_unknown(table, PRICE_KEYS, where)
        numbers = {k: v for k, v in table.items() if k != "currency"}
        for key, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{where}: {key} must be a number >= 0")
        if "input" not in numbers or "output" not in numbers:
            raise ConfigError(f"{where} needs both input and output")
        currency = table.get("currency", "USD")
        if not isinstance(currency, str) or not currency:
            raise ConfigError(f'{where}: currency must be a code such as "USD"')
        prices[spec] = ModelPrices(
            float(numbers["input"]),
            float(numbers["output"]),
            float(numbers.get("cache_read", numbers["input"])),
            float(numbers.get("cache_write", numbers["input"])),
            currency,
        )
    return prices


def parse_profile(value: object, where: str = "profile") -> str:
    """`value` as a profile name, or a `ConfigError` naming the nearest and every one."""
    if isinstance(value, str) and value in PROFILES:
        return value
    near = difflib.get_close_matches(str(value), PROFILES, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise ConfigError(f"{where}: unknown profile {value!r}{hint}; choose {', '.join(PROFILES)}")


def parse_effort(value: object, where: str = "effort") -> Effort:
    """`value` as an effort level, or a `ConfigError` listing the levels."""
    if value not in EFFORTS:
        raise ConfigError(f"{where} must be one of {', '.join(EFFORTS)}, not {value!r}")
    return value


def unknown_key(table: dict[str, Any], known: Collection[str]) -> str | None:
    """What is wrong with `table`'s keys: its first key not in `known`, and the nearest one
    that is (None: all are known)."""
    for key in sorted(set(table) - set(known)):
        nearest = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
        return f"unknown key {key!r}" + (f" (did you mean {nearest[0]!r}?)" if nearest else "")
    return None


def refuse_unknown(table: dict[str, Any], known: Collection[str], where: str) -> None:
    """A `ConfigError` naming the first key of `table` not in `known`, and the nearest one."""
    if (problem := unknown_key(table, known)) is not None:
        raise ConfigError(f"{where}: {problem}")


def _providers(path: Path, providers: Any) -> tuple[dict[str, str], dict[str, float]]:
    """`[providers.NAME]` tables: base URLs and first-token timeouts, by provider name."""
    if not isinstance(providers, dict):
        raise ConfigError(f"{path}: [providers] must be a table of provider tables")
    urls, timeouts = {}, {}
    for name, table in providers.items():
        url = table.get("base_url") if isinstance(table, dict) else None
        if not isinstance(table, dict) or not isinstance(url, str | None):
            raise ConfigError(f"{path}: [providers.{name}] base_url must be a string URL")
        refuse_unknown(table, PROVIDER_KEYS, f"{path}: [providers.{name}]")
        if url:
            urls[name] = url
        if "first_token_timeout" in table:
            seconds = table["first_token_timeout"]
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
                raise ConfigError(
                    f"{path}: [providers.{name}] first_token_timeout must be seconds above 0"
                )
            timeouts[name] = float(seconds)
    return urls, timeouts


def _max_tokens(path: Path, providers: Any) -> dict[str, int]:
    caps = {}
    for name, table in providers.items() if isinstance(providers, dict) else ():
        cap = table.get("max_tokens") if isinstance(table, dict) else None
        if cap is None:
            continue
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ConfigError(f"{path}: [providers.{name}] max_tokens must be a whole number >= 1")
        caps[name] = cap
    return caps


def _retry(path: Path, table: Any) -> RetryPolicy:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [retry] must be a table")
    policy = RetryPolicy()
    refuse_unknown(table, frozenset(vars(policy)), f"{path}: [retry]")
    values = {}
    for key, default in vars(policy).items():
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{path}: retry.{key} must be a number of at least 0")
        values[key] = type(default)(value)
    if values["attempts"] < 1:
        raise ConfigError(f"{path}: retry.attempts must be at least 1")
    return RetryPolicy(**values)


def _goal_rounds(path: Path, table: Any) -> int:
    if isinstance(table, dict):
        refuse_unknown(table, frozenset({"rounds"}), f"{path}: [goal]")
    rounds = table.get("rounds", DEFAULT_GOAL_ROUNDS) if isinstance(table, dict) else None
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ConfigError(f"{path}: goal.rounds must be a whole number of at least 1")
    return rounds


def parse_database(value: object, where: str) -> str:
    """`value` as a PostgreSQL URL, or a `ConfigError` showing the form (never the value:
    it may hold a password)."""
    if not isinstance(value, str) or not value.startswith(DATABASE_SCHEMES):
        raise ConfigError(f'{where} must be a URL such as "postgresql://user@host:5432/deepacp"')
    return value


def _rewind_budget(path: Path, table: Any) -> int:
    if isinstance(table, dict):
        refuse_unknown(table, frozenset({"budget_mb"}), f"{path}: [rewind]")
    megabytes = (
        table.get("budget_mb", DEFAULT_REWIND_BUDGET / 2**20) if isinstance(table, dict) else None
    )
    if isinstance(megabytes, bool) or not isinstance(megabytes, int | float) or megabytes < 0:
        raise ConfigError(f"{path}: [rewind] budget_mb must be a number of megabytes, at least 0")
    return int(megabytes * 2**20)


def _verify(path: Path, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: 'verify' must be true or false")
    return value


def load_config(home: Path | None = None) -> UserConfig:
    """Read config.toml; a missing file is an empty config, a broken one a `ConfigError`."""
    path = (home or deepacp_home()) / "config.toml"
    try:
        data = tomllib.loads(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return UserConfig()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"cannot read {path}: nested too deeply") from None
    refuse_unknown(data, TOP_LEVEL_KEYS, str(path))
    model = data.get("model")
    models = data.get("models", [])
    if model is not None and not isinstance(model, str):
        raise ConfigError(
            f"{path}: 'model' must be a string such as \"anthropic:claude-sonnet-4-5\""
        )
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ConfigError(f"{path}: 'models' must be a list of model spec strings")
    effort = data.get("effort")
    database = data.get("database")
    from deepacp.backends.sandbox import POLICIES, parse_policy

    try:
        sandbox = None if "sandbox" not in data else parse_policy(data["sandbox"])
    except ValueError:
        raise ConfigError(f"{path}: 'sandbox' must be one of {', '.join(POLICIES)}") from None
    urls, timeouts = _providers(path, data.get("providers", {}))
    return UserConfig(
        model=model,
        models=tuple(models),
        effort=None if effort is None else parse_effort(effort, f"{path}: 'effort'"),
        base_urls=urls,
        first_token_timeouts=timeouts,
        max_tokens=_max_tokens(path, data.get("providers", {})),
        retry=_retry(path, data.get("retry", {})),
        prices=_prices(data.get("prices", {}), path),
        sandbox=sandbox,
        goal_rounds=_goal_rounds(path, data.get("goal", {})),
        database=None if database is None else parse_database(database, f"{path}: 'database'"),
        rewind_budget=_rewind_budget(path, data.get("rewind", {})),
        verify=_verify(path, data.get("verify", True)),
        profile=parse_profile(data["profile"], f"{path}: 'profile'") if "profile" in data else None,
    )


def sandbox_policy(flag: SandboxPolicy | None, home: Path | None = None) -> SandboxPolicy:
    """The sandbox policy sessions start with: the flag, else config.toml, else the default."""
    from deepacp.backends.sandbox import DEFAULT_POLICY

    return flag or load_config(home).sandbox or DEFAULT_POLICY


def database_url(home: Path | None = None) -> str | None:
    """Where sessions live, when not in SQLite: `$DEEPACP_DATABASE_URL` (as it is: the store
    checks it when it connects), else config.toml's `database`."""
    return os.environ.get(DATABASE_ENV) or load_config(home).database
