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
SETUP_METHOD = "setup"
SETUP_ARGS = ("setup",)
"""`deepacp setup`: the client adds these to the command it starts deepacp with."""

AGENT_INFO = {"name": "deepacp", "title": "deepacp", "version": __version__}


@functools.cache
def mcp_available() -> bool:
    """Whether MCP servers can be connected: langchain-mcp-adapters is a dependency, found
    here without importing it (that waits until a session connects a server)."""
    return importlib.util.find_spec("langchain_mcp_adapters") is not None


REWIND_METHOD, EDIT_PROMPT_METHOD = "session/rewind", "session/edit_prompt"
"""Extension methods (sent as `_session/rewind`, `_session/edit_prompt`) shaped like the
ACP draft RFD "Session Rewind", advertised in `_meta` as the RFD's `session.rewind`."""


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
            "fork": {},
            "additionalDirectories": {},
        },
        "auth": {"logout": {}},
        "_meta": {"deepacp": {"session": {"rewind": {"edit_prompt": True}}}},
    }


def terminal_auth(client_capabilities: Any) -> bool:
    """Whether the client can run deepacp in a terminal for sign-in: `auth.terminal`, or
    the `terminal-auth` flag in `_meta` that older clients (and the ACP Registry's check)
    send."""
    if not isinstance(client_capabilities, dict):
        return False
    auth = client_capabilities.get("auth")
    meta = client_capabilities.get("_meta")
    return (isinstance(auth, dict) and auth.get("terminal") is True) or (
        isinstance(meta, dict) and bool(meta.get("terminal-auth"))
    )


def auth_methods(client_capabilities: Any = None) -> list[dict[str, Any]]:
    """How to give deepacp access to a model: `deepacp setup` in a terminal (for clients
    that can run one), or an API key in the environment; none when the model in effect
    needs no key."""
    from deepacp.models import key_variable

    variable = key_variable()
    if variable is None:
        return []
    methods: list[dict[str, Any]] = []
    if terminal_auth(client_capabilities):
        methods.append(
            {
                "type": "terminal",
                "id": SETUP_METHOD,
                "name": "Set up an API key",
                "description": "Choose the model provider and paste its API key in a "
                "terminal; it is kept in the OS keyring (or a file only you can read).",
                "args": list(SETUP_ARGS),
            }
        )
    methods.append(
        {
            "type": "env_var",
            "id": AUTH_METHOD,
            "name": "Model API key",
            "description": f"Set {variable} in the environment deepacp starts with (the "
            "editor's agent settings have an env section), run `deepacp setup`, or choose "
            "another model with DEEPACP_MODEL.",
            "vars": [{"name": variable, "secret": True}],
        }
    )
    return methods


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
        "authMethods": auth_methods(params.get("clientCapabilities")),
        "agentInfo": AGENT_INFO,
        "_meta": {"steering": {"supported": True}},  # `_session/steering` (acp/steering.py)
    }
