"""Approvals: which tool calls need the user's yes, and what "always" remembers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deepacp.backends.errors import BackendError
from deepacp.backends.globs import glob_matches
from deepacp.backends.guard import GuardBreach
from deepacp.backends.protocol import Backend
from deepacp.backends.sandbox import QUIET_POLICIES, SandboxPolicy
from deepacp.events import PermissionKind
from deepacp.harness import EXECUTE, MUTATING_FILE_TOOLS, OUTSIDE_SANDBOX_ARG, current_task_call
from deepacp.session.modes import DEFAULT_MODE, Mode

APPROVAL_DECISIONS = ("approve", "reject")
"""What the user may answer a gated call (LangChain's approval middleware's decisions)."""
GATED_TOOLS = frozenset({*MUTATING_FILE_TOOLS, EXECUTE})
"""Tools that change the workspace or run commands: gated in `ask`, hidden in `plan`."""


CODE_EXECUTION_PATHS = (
    "**/.git/**",  # config (core.fsmonitor, core.pager, aliases, filters), hooks, info/
    "**/.hg/**",  # hgrc hooks
    "**/.deepacp/hooks.json",  # deepacp's project hooks (they still run only once trusted)
    "**/.vscode/**",  # editors' project settings: tasks, language-server and tool commands
    "**/.idea/**",
    "**/.zed/**",
    "**/.helix/**",
    "**/.nvim.lua",  # Neovim's and Vim's exrc files, run when the editor opens the folder
    "**/.nvimrc",
    "**/.exrc",
)
"""Files whose change makes a later command that looks harmless (`git status`, opening the
folder in an editor) run code: changing one is asked about in every mode but yolo, whatever
"always allow" was answered. Build files (Makefile, package.json, ...) are not listed: they
run code only when the user runs the build, which is what they are for."""


def runs_code_later(backend: Backend, path: str) -> bool:
    """Whether `path` (as written, or where its links lead) is in `CODE_EXECUTION_PATHS`."""
    seen = []
    for resolve in (backend.workspace_path, backend.resolved_path):
        try:
            seen.append(resolve(path))
        except BackendError:
            continue
    return any(glob_matches(p, where) for where in seen for p in CODE_EXECUTION_PATHS)


def permission_options(allowed_decisions: Sequence[str]) -> tuple[PermissionKind, ...]:
    """The permission options a gated call can offer, from what its config allows."""
    options: list[PermissionKind] = []
    if "approve" in allowed_decisions:
        options += ["allow_once", "allow_always"]
    if "reject" in allowed_decisions:
        options += ["reject_once", "reject_always"]
    return tuple(options)


ESCAPE_OPTIONS: tuple[PermissionKind, ...] = ("allow_once", "reject_once")
"""What a request to run outside the sandbox offers: never "always", so no earlier or
later answer covers it."""


def rule_key(name: str, args: dict) -> tuple[str, str]:
    """What an "always" answer remembers: a command exactly, any other tool by name."""
    if name == EXECUTE:
        return (EXECUTE, str(args.get("command", "")))
    return (name, "")


@dataclass
class ApprovalPolicy:
    """A session's mode and "always" rules, read live by the approval gate.

    Once a call has been put to the user it stays gated (the gate is asked again when the
    run resumes), so switching mode while a question is open cannot turn a "no" into a
    silent "yes".
    """

    mode: Mode = DEFAULT_MODE
    always_allow: set[tuple[str, str]] = field(default_factory=set)
    always_reject: set[tuple[str, str]] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    task_of: dict[str, str] = field(default_factory=dict)
    """A sub-agent's tool call -> the parent's `task` call, whose card the user sees."""
    extra_gated: frozenset[str] = frozenset()
    """More tools that change things (MCP tools that do not declare themselves read-only)."""
    runs_code_later: Callable[[str], bool] = lambda path: False
    """Whether changing this file makes later commands run code (see CODE_EXECUTION_PATHS)."""
    sandbox: Callable[[], SandboxPolicy] = lambda: "off"
    """The sandbox policy commands run under now (`SandboxSetting.effective`)."""
    breach: GuardBreach = field(default_factory=GuardBreach)
    """What the sandbox's guard could not undo (`SandboxSetting.breach`): then the next
    command is asked, in every mode but yolo, whatever was answered before."""

    def gated(self, name: str) -> bool:
        return name in GATED_TOOLS or name in self.extra_gated

    def escapes_sandbox(self, name: str, args: dict) -> bool:
        """Whether the call asks to run a command outside a sandbox that is in force. Any
        value but false counts (the tool's argument parsing may read "yes" as true)."""
        asks = args.get(OUTSIDE_SANDBOX_ARG) not in (None, False)
        return name == EXECUTE and asks and self.sandbox() != "off"

    def _contained(self, name: str, args: dict) -> bool:
        """A command the sandbox keeps to the workspace, with no network and the files
        that run code later read-only (`GUARDED_PATHS`)."""
        return (
            name == EXECUTE
            and self.sandbox() in QUIET_POLICIES
            and not self.escapes_sandbox(name, args)
        )

    def needs_approval(self, call_id: str, name: str, args: dict) -> bool:
        if call_id in self.asked:
            return True
        if not self.gated(name):
            return False
        if (task := current_task_call.get()) is not None:
            self.task_of[call_id] = task
        key = rule_key(name, args)
        if self.mode == "plan" or key in self.always_reject:
            gate = True  # plan mode outranks "always allow": the gate refuses (sub-agents too)
        elif self.escapes_sandbox(name, args):
            gate = True  # in every mode, whatever was answered before
        elif self.mode == "yolo":
            gate = False
        elif name == EXECUTE and self.breach.take() is not None:
            gate = True  # the user was told what a command left: this one waits for them
        elif name in MUTATING_FILE_TOOLS and self.runs_code_later(str(args.get("file_path"))):
            gate = True  # outranks accept-edits and "always allow"
        elif key in self.always_allow:
            gate = False
        elif self.mode == "accept-edits":
            gate = name not in MUTATING_FILE_TOOLS and not self._contained(name, args)
        else:
            gate = True
        if gate:
            self.asked.add(call_id)
        return gate

    def preset_answer(self, name: str, args: dict) -> PermissionKind | None:
        """An answer the user already gave for calls like this ("reject always")."""
        return "reject_always" if rule_key(name, args) in self.always_reject else None

    def remember(self, name: str, args: dict, answer: PermissionKind) -> None:
        if self.escapes_sandbox(name, args):
            return  # each run outside the sandbox is asked on its own
        key = rule_key(name, args)
        if answer == "allow_always":
            self.always_allow.add(key)
            self.always_reject.discard(key)
        elif answer == "reject_always":
            self.always_reject.add(key)
            self.always_allow.discard(key)
