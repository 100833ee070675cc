"""hooks.json: which commands run on which events, read and checked.

A file is `{"hooks": [entry, ...]}`; an entry is `{"event": ..., "command": ...}` with, for
the tool events, an optional `tool` (a glob on the tool's name) and `match` (a glob on the
command of `execute`, or on the path a file tool was given), and an optional `timeout` in
seconds. A file with any mistake in it is refused whole, with one line saying where.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from deepacp.config import unknown_key
from deepacp.errors import ConfigError
from deepacp.regular import FileTooLarge, read_regular

HOOKS_FILE = "hooks.json"
PROJECT_HOOKS = Path(".deepacp") / HOOKS_FILE
EVENTS = (
    "session_start",
    "session_end",
    "user_prompt_submit",
    "pre_tool_use",
    "post_tool_use",
    "post_tool_use_failure",
    "permission_request",
    "pre_compact",
    "subagent_start",
    "subagent_stop",
    "stop",
    "input_required",
)
BLOCKING = frozenset({"user_prompt_submit", "pre_tool_use", "permission_request", "stop"})
"""Events whose hooks are waited for and may decide; the others never delay the turn."""
TOOL_EVENTS = frozenset({"pre_tool_use", "post_tool_use", "post_tool_use_failure"})
MATCHED_EVENTS = TOOL_EVENTS | {"permission_request"}
"""Events about one tool call, the only ones an entry's `tool` and `match` apply to."""
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
MAX_FILE_BYTES = 1 << 20
PATH_ARGS = ("file_path", "path")

Source = Literal["user", "project"]


class HooksConfigError(ConfigError):
    """A hooks file that cannot be used, said in one line."""


@dataclass(frozen=True)
class Hook:
    event: str
    command: str
    tool: str | None = None
    match: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    source: Source = "user"

    def matches(self, fields: dict[str, Any]) -> bool:
        """Whether this hook is for the tool call `fields` describes (any, without a matcher)."""
        if self.tool is not None and not fnmatchcase(str(fields.get("tool_name", "")), self.tool):
            return False
        if self.match is None:
            return True
        subject = match_subject(fields.get("tool_args"))
        return subject is not None and fnmatchcase(subject, self.match)


def match_subject(args: Any) -> str | None:
    """What `match` is tried on: the command of a shell call, else the path of a file call."""
    if not isinstance(args, dict):
        return None
    for key in ("command", *PATH_ARGS):
        if isinstance(args.get(key), str):
            return args[key]
    return None


@dataclass(frozen=True)
class HooksFile:
    """A hooks file as read: its hooks and the SHA-256 of its bytes (what trust is given to)."""

    path: Path
    hooks: tuple[Hook, ...]
    digest: str


def read_hooks(path: Path, source: Source) -> HooksFile | None:
    """The hooks in `path` (None when there is no such file), or `HooksConfigError`: a
    link is followed to a regular file only (`deepacp.regular`). Blocking: call it in a
    thread from the event loop."""
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    except FileTooLarge:
        raise HooksConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes; not read") from None
    except OSError as exc:
        raise HooksConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        hooks = parse_hooks(data.decode("utf-8"), source)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HooksConfigError(f"{path}: {exc}; no hook of this file runs") from None
    return HooksFile(path, hooks, hashlib.sha256(data).hexdigest())


def parse_hooks(text: str, source: Source) -> tuple[Hook, ...]:
    """The entries of a hooks file's text, or a ValueError saying which one is wrong."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError("not valid JSON (nested too deeply)") from None
    if not isinstance(document, dict) or set(document) - {"hooks"}:
        raise ValueError('expected an object with one key, "hooks"')
    entries = document.get("hooks", [])
    if not isinstance(entries, list):
        raise ValueError('"hooks" must be a list of entries')
    return tuple(_entry(entry, number, source) for number, entry in enumerate(entries, 1))


def _entry(entry: Any, number: int, source: Source) -> Hook:
    where = f"entry {number}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    if (
        problem := unknown_key(entry, ("event", "command", "tool", "match", "timeout"))
    ) is not None:
        raise ValueError(f"{where}: {problem}")
    event, command = entry.get("event"), entry.get("command")
    if event not in EVENTS:
        raise ValueError(f"{where}: event must be one of {', '.join(EVENTS)} (got {event!r})")
    if not isinstance(command, str) or not command.strip() or "\0" in command:
        raise ValueError(f"{where}: command must be a non-empty string without NUL")
    for key in ("tool", "match"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{where}: {key} must be a string")
        if value is not None and event not in MATCHED_EVENTS:
            raise ValueError(f"{where}: {key} applies only to {', '.join(sorted(MATCHED_EVENTS))}")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ValueError(f"{where}: timeout must be a number of seconds")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"{where}: timeout must be between 0 and {MAX_TIMEOUT:.0f} seconds")
    return Hook(event, command, entry.get("tool"), entry.get("match"), float(timeout), source)
