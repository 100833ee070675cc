"""The JSON-RPC errors the ACP face answers with: each one readable line."""

from __future__ import annotations

from acp.exceptions import RequestError

from deepacp.errors import DeepacpError, SessionBusy, SessionNotFound, TurnError, WrongWorkspace


def request_error(exc: DeepacpError) -> RequestError:
    """The JSON-RPC error for one of our errors: its message, one readable line."""
    if isinstance(exc, SessionNotFound):
        return RequestError(-32002, f"Resource not found: {exc}")
    if isinstance(exc, WrongWorkspace):
        return bad_params(str(exc))
    if isinstance(exc, SessionBusy | TurnError):
        return RequestError(-32603, f"Internal error: {exc}")
    return RequestError(-32000, str(exc))


def bad_params(message: str) -> RequestError:
    return RequestError(-32602, f"Invalid params: {message}")
