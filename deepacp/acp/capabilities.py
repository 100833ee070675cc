"""What deepacp advertises in `initialize`: the one source of truth, as plain JSON.

Kept free of the ACP SDK so the first response never waits for its schema models.
"""

from __future__ import annotations

from typing import Any

from deepacp._version import __version__

PROTOCOL_VERSION = 1

AGENT_INFO = {"name": "deepacp", "title": "deepacp", "version": __version__}

AGENT_CAPABILITIES: dict[str, Any] = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": False, "sse": False},
    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
}


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
        "agentCapabilities": AGENT_CAPABILITIES,
        "authMethods": [],
        "agentInfo": AGENT_INFO,
    }
