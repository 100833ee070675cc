"""PermissionsPart: "always allow" and "always reject" answers outlive the session, per
workspace (`session/storage/permissions.py`), and `/permissions` lists and forgets them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from deepacp.events import Command
from deepacp.harness import EXECUTE
from deepacp.session.parts.base import CommandHandler, EndedTurn, Part
from deepacp.session.storage.permissions import Rule, Rules, WorkspaceRules

if TYPE_CHECKING:
    from deepacp.session.context import SessionContext

PERMISSIONS = "permissions"
COMMAND = Command(
    PERMISSIONS,
    'List what you answered "always" in this workspace (/permissions forget N removes one)',
    hint="[forget N | forget all]",
)


def described(verdict: str, rule: Rule) -> str:
    name, key = rule
    what = f"`{key}`" if name == EXECUTE else f"{name} (every call)"
    return f"{verdict} {what}"


class PermissionsPart(Part):
    def __init__(self, rules: WorkspaceRules | None) -> None:
        """`rules`: where this workspace's are kept (None: not kept, the session's alone)."""
        self.rules = rules
        self._saved = Rules()

    def bind(self, ctx: SessionContext) -> None:
        super().bind(ctx)
        if self.rules is not None:
            self._saved = self.rules.load()
            ctx.policy.always_allow |= self._saved.allow
            ctx.policy.always_reject |= self._saved.reject

    def commands(self) -> Sequence[tuple[Command, CommandHandler]]:
        return ((COMMAND, self._command),)

    def _listed(self) -> list[tuple[str, Rule]]:
        policy = self.ctx.policy
        allow = [("Always allow", r) for r in sorted(policy.always_allow)]
        return allow + [("Always reject", r) for r in sorted(policy.always_reject)]

    async def turn_ended(self, turn: EndedTurn) -> None:
        self.save()

    async def closed(self) -> None:
        self.save()

    def save(self) -> None:
        """Keep what changed this session in the workspace's rules (another session's
        changes to them since are kept too)."""
        if self.rules is None:
            return
        policy, saved = self.ctx.policy, self._saved
        now = Rules(set(policy.always_allow), set(policy.always_reject))
        if (now.allow, now.reject) == (saved.allow, saved.reject):
            return
        stored = self.rules.load()
        allow = (stored.allow | (now.allow - saved.allow)) - (saved.allow - now.allow)
        reject = (stored.reject | (now.reject - saved.reject)) - (saved.reject - now.reject)
        self._saved = Rules(allow - reject, reject)
        self.rules.save(self._saved)

    async def _command(self, argument: str) -> str:
        listed = self._listed()
        words = argument.split()
        if not words:
            if not listed:
                return 'Nothing answered "always" in this workspace yet.'
            lines = [f"{n}. {described(*item)}" for n, item in enumerate(listed, start=1)]
            return (
                'What you answered "always" in this workspace (kept for its later sessions; '
                "/permissions forget N removes one):\n\n" + "\n".join(lines)
            )
        if words == ["forget", "all"]:
            self.ctx.policy.always_allow.clear()
            self.ctx.policy.always_reject.clear()
            self.save()
            return 'Forgot every "always" answer of this workspace: each call asks again.'
        if len(words) != 2 or words[0] != "forget" or not words[1].isdigit():
            return "Usage: /permissions, /permissions forget N, /permissions forget all."
        number = int(words[1])
        if not 1 <= number <= len(listed):
            return f"There is no rule {number}; /permissions lists the {len(listed)} there are."
        verdict, rule = listed[number - 1]
        policy = self.ctx.policy
        (policy.always_allow if verdict == "Always allow" else policy.always_reject).discard(rule)
        self.save()
        return f"Forgot: {described(verdict, rule)}. It asks again."
