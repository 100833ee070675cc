"""SandboxPart: the session's sandbox policy, and what the user is told about it — once,
when commands cannot be sandboxed here, or when they run on a remote machine."""

from __future__ import annotations

from deepacp.backends.sandbox import SandboxPolicy, SandboxSetting, sandbox_problem
from deepacp.errors import ConfigError
from deepacp.events import Event, Notice
from deepacp.session.modes import Mode
from deepacp.session.parts.base import Part, PromptStart


class SandboxPart(Part):
    def __init__(self, setting: SandboxSetting, remote: str | None = None) -> None:
        """`remote`: where the files and commands are, when not here (they have no
        sandbox there, and are asked about as with `off`)."""
        self.setting = setting
        self.remote = remote
        self._told = False

    @property
    def policy(self) -> SandboxPolicy:
        return self.setting.policy

    def _notice(self) -> Notice | None:
        if self.remote is not None:
            return Notice(
                f"Files and commands are on {self.remote}. Commands run there without a "
                "sandbox, as with the sandbox off: approvals are what guards them.",
                "warning",
                f"Commands on {self.remote} are not sandboxed",
            )
        problem = sandbox_problem()
        if self.setting.policy == "off" or problem is None:
            return None
        return Notice(
            f"Commands are not sandboxed: {problem}. They run with your rights, and "
            "are asked about as before; `deepacp doctor` checks the set-up.",
            "warning",
            "Sandbox unavailable",
        )

    async def _tell(self) -> None:
        if not self._told and (notice := self._notice()) is not None:
            self._told = True
            await self.ctx.handler.emit(notice)

    async def opening(self) -> list[Event]:
        notice = self._notice()
        self._told = self._told or notice is not None
        return [notice] if notice is not None else []

    async def prompt_started(self, prompt: PromptStart) -> None:
        await self._tell()  # faces that announce nothing hear of it here

    def mode_changed(self, mode: Mode) -> None:
        self.setting.unasked = mode == "accept-edits"

    async def set(self, policy: SandboxPolicy) -> None:
        """Change the sandbox policy; the next command runs under it."""
        if self.remote is not None and policy != "off":
            raise ConfigError(
                f"commands on {self.remote} cannot be sandboxed: there is no sandbox on a "
                "remote workspace, and each command is asked about instead"
            )
        self.setting.policy = policy
        await self._tell()
