"""Remembered "always" answers: what the user allowed or rejected always, kept per workspace
under `$DEEPACP_HOME/permissions/` (never in the workspace, where a repository could plant
its own), for every later session there. Running outside the sandbox is never remembered
(`ApprovalPolicy.remember` keeps no rule for it)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from deepacp.private import private_dir, write_private

Rule = tuple[str, str]
"""(tool name, the exact command for `execute`; "" for any call of the tool)."""


@dataclass
class Rules:
    allow: set[Rule] = field(default_factory=set)
    reject: set[Rule] = field(default_factory=set)


class WorkspaceRules:
    """The remembered rules of the workspace at `root`."""

    def __init__(self, home: Path, root: str) -> None:
        self.root = str(Path(root).resolve())
        name = hashlib.sha256(self.root.encode()).hexdigest()[:32]
        self.path = home / "permissions" / f"{name}.json"

    def load(self) -> Rules:
        """The rules as stored (none when there are none, or the file is unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return Rules()
        if not isinstance(data, dict) or data.get("workspace") != self.root:
            return Rules()
        return Rules(_rules(data.get("allow")), _rules(data.get("reject")))

    def save(self, rules: Rules) -> None:
        private_dir(self.path.parent)
        data = {
            "workspace": self.root,
            "allow": sorted(rules.allow),
            "reject": sorted(rules.reject),
        }
        write_private(self.path, json.dumps(data, indent=1).encode())


def _rules(value: object) -> set[Rule]:
    found: set[Rule] = set()
    for item in value if isinstance(value, list) else []:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(v, str) for v in item):
            found.add((item[0], item[1]))
    return found
