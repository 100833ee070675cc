"""The harness profile the user asked for: `--profile`, else `DEEPACP_PROFILE`, else
`profile` in config.toml; `auto` (or none of them) leaves the choice to the model and its
server (`deepacp.harness.profiles.choose_profile`)."""

from __future__ import annotations

import os

from deepacp.config import load_config, parse_profile

PROFILE_ENV = "DEEPACP_PROFILE"
AUTO = "auto"


def configured_profile(flag: str | None = None) -> str | None:
    """The profile name the user set (None: auto), or a `ConfigError` naming the valid ones."""
    if flag:
        wanted = parse_profile(flag, "--profile")
    elif value := os.environ.get(PROFILE_ENV):
        wanted = parse_profile(value, PROFILE_ENV)
    else:
        wanted = load_config().profile or AUTO
    return None if wanted == AUTO else wanted
