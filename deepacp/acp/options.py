"""A session's modes and config options as its responses carry them (mode, model, thinking
effort, sandbox, profile), and the changes a client makes to them."""

from __future__ import annotations

import contextlib
from typing import Any

from deepacp.acp import updates
from deepacp.acp.rpc import bad_params
from deepacp.backends.sandbox import DEFAULT_POLICY, SandboxPolicy, parse_policy, sandbox_problem
from deepacp.config import ServerOptions, load_config, parse_effort, parse_profile, sandbox_policy
from deepacp.effort import EffortChoice, effort_choice
from deepacp.errors import ConfigError, ModelConfigError
from deepacp.models import check_provider, configured_spec, split_spec
from deepacp.session import ProfilePart, SandboxPart, Session, SessionRecord, parse_mode


def start_policy(flag: SandboxPolicy | None) -> SandboxPolicy:
    """The policy sessions start with; a broken config.toml (reported where the model is
    read) leaves the default, never `off`."""
    try:
        return sandbox_policy(flag)
    except ConfigError:
        return sandbox_policy(flag or DEFAULT_POLICY)


def sandbox_choice(value: object) -> SandboxPolicy:
    """A policy the user may pick here: any where bubblewrap works, else only `off`."""
    try:
        policy = parse_policy(value)
    except ValueError as exc:
        raise bad_params(str(exc)) from None
    if policy != "off" and (problem := sandbox_problem()) is not None:
        raise bad_params(f"no sandbox is available here: {problem}")
    return policy


def resolve_spec(options: ServerOptions, spec: str | None) -> str:
    """The model spec to use, checked; on a server, where the keys and packages are the
    server's, as given ("": the server's own model)."""
    if options.server:
        with contextlib.suppress(ModelConfigError):
            return configured_spec(spec or options.model)
        return ""
    spec = configured_spec(spec or options.model)
    check_provider(spec)
    return spec


def model_choices(options: ServerOptions, current: str) -> list[str]:
    """The session's model, the configured default (which may have changed since the
    session was made) and the config.toml list."""
    try:
        default = [configured_spec(options.model)]
    except ModelConfigError:
        default = []
    return list(dict.fromkeys([current, *default, *load_config().models]))


def effort_of(record: SessionRecord) -> EffortChoice | None:
    """The session's effort levels and the one in effect (None: the model has none)."""
    try:
        provider, name = split_spec(record.model or "")
    except ModelConfigError:
        return None
    wanted = record.effort or load_config().effort
    return effort_choice(provider, name, wanted)  # type: ignore[arg-type]


def session_state(session: Session, options: ServerOptions) -> dict[str, Any]:
    """The modes and config options a session response carries."""
    record = session.record
    spec = record.model or ""
    config = updates.config_options(
        record.mode, spec, model_choices(options, spec), effort_of(record)
    )
    config.append(updates.sandbox_option(session.part(SandboxPart).policy, sandbox_problem()))
    config.append(updates.profile_option(session.part(ProfilePart).current))
    return {"modes": updates.mode_state(record.mode), "config_options": config}


async def set_mode(session: Session, mode_id: str) -> None:
    try:
        mode = parse_mode(mode_id)
    except ValueError as exc:
        raise bad_params(str(exc)) from None
    await session.set_mode(mode)


async def set_option(
    session: Session, options: ServerOptions, config_id: str, value: str | bool
) -> list[Any]:
    """Set one of the session's config options; the options as they are now."""
    if config_id == "mode":
        await set_mode(session, str(value))
    elif config_id == "model":
        await session.set_model(resolve_spec(options, str(value)))
    elif config_id == updates.EFFORT_OPTION and (choice := effort_of(session.record)):
        if value not in choice.levels:
            raise bad_params(
                f"effort {value!r} is not offered by {session.record.model}; "
                f"choose one of {', '.join(choice.levels)}"
            )
        await session.set_effort(parse_effort(value))
    elif config_id == updates.SANDBOX_OPTION:
        await session.part(SandboxPart).set(sandbox_choice(value))
    elif config_id == updates.PROFILE_OPTION:
        try:
            session.part(ProfilePart).set(parse_profile(value, "profile"))
        except ConfigError as exc:
            raise bad_params(str(exc)) from None
    else:
        raise bad_params(f"unknown config option {config_id!r}")
    return session_state(session, options)["config_options"]
