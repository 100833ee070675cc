"""Secrets from the environment, and their redaction wherever text leaves our hands.

A secret is the value (8 characters or more) of an environment variable whose name says
key, token, secret, password or credential, or a credential a client gave us for an MCP
server. Logs, error messages, tool results and model output are redacted, so no secret
reaches the model, the session store or a memory file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

SECRET_NAMES = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
MIN_LENGTH = 8
REDACTED = "[redacted]"
_REGISTERED: set[str] = set()
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values in `environ` (default: ours) and those registered, longest first."""
    environ = os.environ if environ is None else environ
    found = {v for k, v in environ.items() if SECRET_NAMES.search(k) and len(v) >= MIN_LENGTH}
    return sorted(found | _REGISTERED, key=len, reverse=True)


def register_secrets(env: Mapping[str, str], headers: Mapping[str, str]) -> None:
    """Treat credentials a client hands us (an MCP server's environment and headers) as
    secrets for the rest of the process. A header's last word counts too (`Bearer <token>`)."""
    values = [v for k, v in env.items() if SECRET_NAMES.search(k)]
    for name, value in headers.items():
        if name.lower() in _SECRET_HEADERS or SECRET_NAMES.search(name):
            values += [value, value.split()[-1] if value.split() else value]
    _REGISTERED.update(v for v in values if len(v) >= MIN_LENGTH)


def redact(text: str, secrets: list[str] | None = None) -> str:
    for secret in secret_values() if secrets is None else secrets:
        text = text.replace(secret, REDACTED)
    return text


def clip(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, redacted first: a cut through a secret
    must not leave its prefix behind for redaction to miss."""
    return redact(text)[:limit] if len(text) > limit else text


def redact_any(value: Any, secrets: list[str]) -> Any:
    """`value` with every string inside it (dicts, lists, nested) redacted."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: redact_any(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_any(v, secrets) for v in value)
    return value
