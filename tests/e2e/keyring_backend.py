"""A keyring for tests: a usable OS keyring stand-in that keeps its secrets in the JSON file
$TEST_KEYRING_FILE, so a test can show deepacp prefers a keyring without touching the real
one (selected with PYTHON_KEYRING_BACKEND=keyring_backend.FileKeyring)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def _load(self) -> dict[str, str]:
        path = Path(os.environ["TEST_KEYRING_FILE"])
        return json.loads(path.read_text()) if path.exists() else {}

    def _save(self, secrets: dict[str, str]) -> None:
        Path(os.environ["TEST_KEYRING_FILE"]).write_text(json.dumps(secrets))

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        self._save({**self._load(), f"{service}/{username}": password})

    def delete_password(self, service: str, username: str) -> None:
        secrets = self._load()
        if secrets.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError(username)
        self._save(secrets)
