"""What deepacp advertises in `initialize`: the one source of truth, as plain JSON.

Kept free of the ACP SDK (and of anything heavy) so the first response never waits.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

from deepacp._version import __version__

PROTOCOL_VERSION = 1
AUTH_METHOD = "model-api-key"

AGENT_INFO = {"name": "deepacp", "title": "deepacp", "version": __version__}


@functools.cache
def mcp_available() -> bool:
    """Whether MCP servers can be connected (the `mcp` extra is installed)."""
    return importlib.util.find_spec("langchain_mcp_adapters") is not None


def agent_capabilities() -> dict[str, Any]:
    remote_mcp = mcp_available()
    return {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": remote_mcp, "sse": remote_mcp},
        "sessionCapabilities": {
            "list": {},
            "resume": {},
            "close": {},
            "delete": {},
            "additionalDirectories": {},
        },
    }


def auth_methods() -> list[dict[str, Any]]:
    """How to give deepacp access to a model: an API key in the environment."""
    from deepacp.models import key_variable

    variable = key_variable()
    description = (
        f"Set {variable} in the environment deepacp starts with (the editor's agent settings "
        "have an env section), or choose another model with DEEPACP_MODEL."
        if variable
        else "The configured model needs no API key."
    )
    method: dict[str, Any] = {
        "type": "env_var",
        "id": AUTH_METHOD,
        "name": "Model API key",
        "description": description,
        "vars": [{"name": variable, "secret": True}] if variable else [],
    }
    return [method]


class InitializeParamsError(ValueError):
    """`initialize` params that cannot be answered."""


def initialize_result(params: Any) -> dict[str, Any]:
    """The `initialize` result for the client's params (JSON, camelCase)."""
    if not isinstance(params, dict):
        raise InitializeParamsError("initialize params must be an object")
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 65535:
        raise InitializeParamsError("protocolVersion must be an integer between 0 and 65535")
    return {
        "protocolVersion": min(version, PROTOCOL_VERSION),
        "agentCapabilities": agent_capabilities(),
        "authMethods": auth_methods(),
        "agentInfo": AGENT_INFO,
    }
