"""Trust in a workspace's hooks file: the user's answer, per workspace path and file hash,
kept in `$DEEPACP_HOME/hooks-trust.json` (0600). A changed file has a new hash: asked again."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from deepacp.private import private_dir, private_file

TRUST_FILE = "hooks-trust.json"

log = logging.getLogger(__name__)


class HookTrust:
    def __init__(self, home: Path) -> None:
        self.path = home / TRUST_FILE

    def _read(self) -> dict[str, dict]:
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning(
                "%s is unreadable (%s): every workspace's hooks are asked about", self.path, exc
            )
            return {}
        workspaces = document.get("workspaces") if isinstance(document, dict) else None
        return workspaces if isinstance(workspaces, dict) else {}

    def answer(self, workspace: str, digest: str) -> bool | None:
        """The remembered answer for this workspace's hooks file as it is (None: not asked)."""
        entry = self._read().get(str(Path(workspace).resolve()))
        if not isinstance(entry, dict) or entry.get("sha256") != digest:
            return None
        trusted = entry.get("trusted")
        return trusted if isinstance(trusted, bool) else None

    def remember(self, workspace: str, digest: str, trusted: bool) -> None:
        workspaces = self._read()
        workspaces[str(Path(workspace).resolve())] = {"sha256": digest, "trusted": trusted}
        private_dir(self.path.parent)
        staged = private_file(self.path.with_name(f".{TRUST_FILE}.{os.getpid()}"))
        staged.write_text(json.dumps({"workspaces": workspaces}, indent=1), encoding="utf-8")
        os.replace(staged, self.path)
