"""Secrets from the environment, and their redaction wherever text leaves our hands.

One definition, used for redaction and for scrubbing the commands' environment: a secret
is the value of an environment variable whose name says key, token, secret, password or
credential (`*_PWD` and `*_PASS` too, as in `MYSQL_PWD`), the password in a URL held by any
variable (`DATABASE_URL=postgres://user:PASSWORD@host/db`), or a credential a client gave
us for an MCP server. Values shorter than 8 characters are not redacted (too many false
hits) but their variables are still kept from commands. Logs, error messages, tool results
and model output (streamed pieces too) are redacted, so no secret reaches the editor, the
model, the session store or a memory file. Text that merely looks like a credential (a key
written into AGENTS.md, whose value we were never told) is `looks_like_secret`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

SECRET_NAMES = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_PWD$|_PASS$", re.I)
# Bounded repeats: a value can be anything (an MCP server's environment from the client),
# and an unbounded scheme would make a long value cost time quadratic in its length.
URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^/\s:@]{0,256}:([^/\s@]{1,256})@")
SECRET_TEXT = re.compile(
    r"(sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{20,}|xox[bp]-[A-Za-z0-9-]{10,}"
    r"|(?i:(api[_-]?key|secret|password|token)\s*[:=]\s*\S{8,}))"
)
"""Well-known credential shapes, and `key = value` lines naming one."""
MIN_LENGTH = 8
REDACTED = "[redacted]"
_REGISTERED: set[str] = set()
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def secrets_in(name: str, value: str) -> list[str]:
    """The secret parts of one variable (any length): its value, or URL passwords in it."""
    found = [value] if SECRET_NAMES.search(name) and value else []
    for password in URL_PASSWORD.findall(value):
        found += [password, unquote(password)]
    return found


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values in `environ` (default: ours) and those registered, longest first."""
    environ = os.environ if environ is None else environ
    found = {s for k, v in environ.items() for s in secrets_in(k, v) if len(s) >= MIN_LENGTH}
    return sorted(found | _REGISTERED, key=len, reverse=True)


def register_secrets(env: Mapping[str, str], headers: Mapping[str, str]) -> None:
    """Treat credentials a client hands us (an MCP server's environment and headers) as
    secrets for the rest of the process. A header's last word counts too (`Bearer <token>`)."""
    values = [s for k, v in env.items() for s in secrets_in(k, v)]
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


class StreamRedactor:
    """Redacts text that arrives in pieces (a model's streamed answer): a piece's end that
    could be the beginning of a secret is held back until the next piece settles it."""

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, piece: str) -> str:
        secrets = secret_values()
        text = redact(self.pending + piece, secrets)
        held = max((_overlap(text, s) for s in secrets), default=0)
        self.pending = text[len(text) - held :] if held else ""
        return text[: len(text) - held]

    def flush(self) -> str:
        """What is held back, at the end of the stream. A beginning of a secret as long as the
        shortest secret counts as one (a cut key); a shorter one is only ordinary text."""
        text, self.pending = self.pending, ""
        return REDACTED if len(text) >= MIN_LENGTH else text


def _overlap(text: str, secret: str) -> int:
    """The length of the longest end of `text` that begins `secret` (shorter than it)."""
    for size in range(min(len(secret) - 1, len(text)), 0, -1):
        if text.endswith(secret[:size]):
            return size
    return 0


def looks_like_secret(text: str) -> bool:
    return SECRET_TEXT.search(text) is not None
