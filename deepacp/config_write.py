"""Setting a key in `$DEEPACP_HOME/config.toml` for `deepacp setup`, keeping the user's
other lines and comments as they are.

A key is set by replacing its line (or adding one at the top of its table); the result is
parsed before it is written, so a file setup cannot edit safely is left alone and the user
is told the line to add.
"""

from __future__ import annotations

import json
import re
import tomllib

from deepacp.config import deepacp_home
from deepacp.errors import ConfigError
from deepacp.private import private_dir

HEADER = re.compile(r"^\s*\[")


def set_config(key: str, value: str, table: str = "") -> str:
    """Set `key = value` at the top of config.toml or in `[table]`; returns the file's path."""
    path = deepacp_home() / "config.toml"
    private_dir(path.parent)
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    line = f"{key} = {json.dumps(value)}"
    text = _with_line(existing.splitlines(), key, line, table)
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # RecursionError: nested too deep
        where = f"under [{table}]" if table else "at the top"
        raise ConfigError(f"cannot edit {path}: add `{line}` {where} yourself") from None
    path.write_text(text, encoding="utf-8")
    return str(path)


def _with_line(lines: list[str], key: str, line: str, table: str) -> str:
    start = 0
    if table:
        header = re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]\s*(#.*)?$")
        found = next((i for i, text in enumerate(lines) if header.match(text)), None)
        if found is None:
            return "\n".join([*lines, "", f"[{table}]", line]).lstrip("\n") + "\n"
        start = found + 1
    end = next((i for i in range(start, len(lines)) if HEADER.match(lines[i])), len(lines))
    same = re.compile(rf"^\s*{re.escape(key)}\s*=")
    kept = [text for text in lines[start:end] if not same.match(text)]
    return "\n".join([*lines[:start], line, *kept, *lines[end:]]) + "\n"
