"""Trust in a workspace's hooks file: the question that shows it whole, and the user's
answer, per workspace path and file hash, kept in `$DEEPACP_HOME/hooks-trust.json` (0600).
A changed file has a new hash: asked again."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from deepacp.events import PermissionKind, PermissionRequest
from deepacp.private import private_dir, private_file
from deepacp.secrets import redact
from deepacp.session.hooks.config import HooksConfigError, HooksFile

TRUST_FILE = "hooks-trust.json"
TRUST_CALL_ID = "hooks-trust"
TRUST_OPTIONS: tuple[PermissionKind, ...] = (
    "allow_always",
    "allow_once",
    "reject_once",
    "reject_always",
)
QUESTION_LIMIT = 10_000
"""Characters of the trust question at most: a file whose hooks do not fit is refused."""
COMMAND_HEAD, COMMAND_TAIL = 200, 100
"""Characters shown of each end of a longer command; the middle is named by its length."""

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


def shown_command(command: str) -> str:
    """`command` as the question shows it: characters that could hide text (line breaks,
    other controls, direction overrides) escaped, and the middle of a long one replaced by
    how many characters it holds, never dropped silently."""
    text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in redact(command))
    hidden = len(text) - COMMAND_HEAD - COMMAND_TAIL
    if hidden <= 0:
        return text
    return f"{text[:COMMAND_HEAD]} … [{hidden:,} characters not shown] … {text[-COMMAND_TAIL:]}"


def trust_question(file: HooksFile) -> PermissionRequest:
    """The question whether to trust `file`: every hook's event and command, in file order.
    `HooksConfigError` when they do not fit in one question (the file is refused)."""
    listed = "; ".join(
        f"{number}. {hook.event}: {shown_command(hook.command)}"
        for number, hook in enumerate(file.hooks, 1)
    )
    count = f"{len(file.hooks)} hook{'s' if len(file.hooks) != 1 else ''}"
    title = f"Run the hooks of this workspace ({file.path})? {count}: {listed}"
    if len(title) > QUESTION_LIMIT:
        raise HooksConfigError(
            f"{file.path}: too many hooks to show in one question ({count}, "
            f"{len(title):,} characters; at most {QUESTION_LIMIT:,}); no hook of this file runs"
        )
    return PermissionRequest(TRUST_CALL_ID, title, TRUST_OPTIONS, "execute")
