"""HooksPart: the user's and the workspace's hooks (`hooks.SessionHooks`) run on the
session's events: a prompt may be refused, a stop sent back to work, tool calls judged
(through the harness), compaction announced. On a LangGraph server they do not run: the
user is told so once, when there are hooks to skip."""

from __future__ import annotations

import os
from pathlib import Path

from deepacp.backends.sandbox import Sandbox, SandboxSetting
from deepacp.events import Event, Notice
from deepacp.session.assembly import Contributions
from deepacp.session.context import SessionContext
from deepacp.session.hooks import SessionHooks
from deepacp.session.hooks.config import HOOKS_FILE, PROJECT_HOOKS
from deepacp.session.parts.base import Part

NOT_HERE = (
    "Hooks do not run for a session on a LangGraph server: {files} will be left alone. "
    "Open the session without --server to run them."
)


class HooksPart(Part):
    def __init__(self, sandbox: SandboxSetting, here: bool = True) -> None:
        """`here`: the thread runs in this process (on a server, hooks do not run)."""
        self.setting = sandbox
        self.here = here
        self.hooks: SessionHooks | None = None

    def bind(self, ctx: SessionContext) -> None:
        super().bind(ctx)
        if self.here:
            home, roots = ctx.records.home, tuple(Path(r) for r in ctx.roots[1:])
            sandbox = Sandbox(Path(ctx.record.cwd), self.setting, (home,), roots)
            self.hooks = SessionHooks(ctx.id, ctx.record.cwd, home, ctx.handler, sandbox)

    async def opening(self) -> list[Event]:
        if self.here:
            return []
        found = [
            str(path)
            for path in (
                self.ctx.records.home / HOOKS_FILE,
                Path(self.ctx.record.cwd) / PROJECT_HOOKS,
            )
            if os.path.lexists(path)
        ]
        return [Notice(NOT_HERE.format(files=" and ".join(found)), "warning")] if found else []

    async def contribute(self, parts: Contributions) -> None:
        if self.hooks is not None:
            parts.hooks, parts.before_compact = self.hooks, self.hooks.compacting

    async def before_prompt(self, text: str, steered: bool) -> str | None:
        if self.hooks is None or (refused := await self.hooks.before_prompt(text)) is None:
            return None
        what = "message" if steered else "prompt"
        await self.ctx.handler.emit(Notice(f"A hook refused the {what}: {refused}", "warning"))
        return f"a hook refused the {what}: {refused}"

    async def closed(self) -> None:
        if self.hooks is not None:
            await self.hooks.close()
