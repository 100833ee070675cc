"""API keys that `deepacp setup` stored: in the OS keyring when one is usable, else in a
file only the user can read.

`$DEEPACP_HOME/credentials.json` (mode 0600, in a 0700 folder) lists the stored keys by the
environment variable each stands in for: `{"keyring": true}` for a key the keyring holds
(so the keyring is asked only for keys it has), `{"key": "..."}` for a key kept in the
file. The `keyring` package is imported only to store, read or forget such a key.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from deepacp.config import deepacp_home
from deepacp.errors import ConfigError
from deepacp.private import private_dir

SERVICE = "deepacp"
FILE_NAME = "credentials.json"


def credentials_path(home: Path | None = None) -> Path:
    return (home or deepacp_home()) / FILE_NAME


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; run `deepacp setup` again") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; run `deepacp setup` again")
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _write(path: Path, data: dict[str, dict[str, Any]]) -> None:
    """Replace the file whole; it is never readable by others, not even for a moment."""
    private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # in case a stale temporary file was there with other rights
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(data, file, indent=2)
    os.replace(temporary, path)


def _keyring() -> Any:
    """The OS keyring, or None when there is none that can keep a secret here."""
    try:
        import keyring
        from keyring.backends import fail, null
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring | null.Keyring):
        return None
    return backend


def store_key(variable: str, key: str, home: Path | None = None) -> str:
    """Keep `key` as the value of `variable`; returns where it went, for the user."""
    path = credentials_path(home)
    data = _read(path)
    backend = _keyring()
    entry: dict[str, Any] = {"key": key}
    where = f"{path} (readable only by you)"
    if backend is not None:
        try:
            backend.set_password(SERVICE, variable, key)
        except Exception:  # a locked or broken keyring: the file still works
            backend = None
        else:
            entry = {"keyring": True}
            where = f"the OS keyring ({backend.name})"
    data[variable] = entry
    _write(path, data)
    return where


def stored_key(variable: str, home: Path | None = None) -> str | None:
    """The key `deepacp setup` stored for `variable`, if any."""
    entry = _read(credentials_path(home)).get(variable)
    if entry is None:
        return None
    if isinstance(entry.get("key"), str):
        return entry["key"]
    backend = _keyring() if entry.get("keyring") else None
    if backend is None:
        return None
    try:
        return backend.get_password(SERVICE, variable)
    except Exception:  # a locked keyring: reported as a missing key, which it is for now
        return None


def forget_keys(home: Path | None = None) -> list[str]:
    """Remove every stored key, from the keyring too; returns the variables they stood in for."""
    path = credentials_path(home)
    data = _read(path)
    backend = _keyring() if any(e.get("keyring") for e in data.values()) else None
    for variable, entry in data.items():
        if entry.get("keyring") and backend is not None:
            with contextlib.suppress(Exception):  # gone already, or the keyring is locked
                backend.delete_password(SERVICE, variable)
    path.unlink(missing_ok=True)
    return sorted(data)
