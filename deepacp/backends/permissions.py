"""Permission rules, enforced in the backend layer so every caller obeys them: the tools,
sub-agents, memory and skills loading, result offload, and direct backend calls.

Path rules: `PermissionRule(operations=("read", "write"), paths=("/secrets/**",),
mode="deny")`. Paths are globs anchored at the workspace root `/` (routed folders keep their
prefix, e.g. `/memories/**`), matched against the path as written and against where its
symbolic links lead (the stricter decision wins, so `config -> secrets` cannot read
`/secrets/key.txt` as `config/key.txt`), by segment: `*` stays within one segment, so
`/etc/*` matches the direct children of `/etc` only; `**` spans any depth, and `/x/**`
also covers `/x` itself. The first matching rule wins; no match means allow.

`interrupt` means "ask the user": the tool layer turns it into an approval (see
`approval_gates`), so inside a tool call it has been approved; anything else that reaches
an `interrupt` rule is refused.

Command rules police the shell, which path rules cannot: `CommandRule(("git status",
"git diff *"), "allow")` — a trailing ` *` is a prefix match, anything else exact. When
path rules are present, a command no rule allows needs approval (and is refused outside
a tool call): the shell is never a silent way around the path rules.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from deepacp.backends.base import DelegatingBackend
from deepacp.backends.errors import BackendError, PathError
from deepacp.backends.globs import compile_glob
from deepacp.backends.protocol import (
    Backend,
    Entry,
    ExecuteResult,
    GrepMatch,
    GrepQuery,
    Shell,
    ShellCommand,
)

Operation = Literal["read", "write"]
RuleMode = Literal["allow", "deny", "interrupt"]
_OPERATIONS = ("read", "write")
_MODES = ("allow", "deny", "interrupt")


class PermissionDenied(BackendError):
    """An operation a permission rule refuses."""


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"permission mode must be one of {', '.join(_MODES)}, not {mode!r}")


@dataclass(frozen=True)
class PermissionRule:
    operations: tuple[Operation, ...]
    paths: tuple[str, ...]
    mode: RuleMode = "deny"

    def __post_init__(self) -> None:
        operations = (self.operations,) if isinstance(self.operations, str) else self.operations
        paths = (self.paths,) if isinstance(self.paths, str) else self.paths
        object.__setattr__(self, "operations", tuple(operations))
        object.__setattr__(self, "paths", tuple(paths))
        if not self.operations or any(op not in _OPERATIONS for op in self.operations):
            raise ValueError(
                f"permission operations must be 'read' and/or 'write', got {operations!r}"
            )
        if not self.paths:
            raise ValueError("a permission rule needs at least one path glob")
        for path in self.paths:
            if not path.startswith("/"):
                raise ValueError(
                    f"permission path {path!r} must start with '/' (the workspace root)"
                )
            compile_glob(path)
        _check_mode(self.mode)

    def matches(self, operation: Operation, rule_path: str) -> bool:
        if operation not in self.operations:
            return False
        return any(compile_glob(p).match(rule_path) for p in self.paths)  # `/x/**` is `/x` too


@dataclass(frozen=True)
class CommandRule:
    commands: tuple[str, ...]
    mode: RuleMode = "deny"

    def __post_init__(self) -> None:
        commands = (self.commands,) if isinstance(self.commands, str) else self.commands
        object.__setattr__(self, "commands", tuple(commands))
        if not self.commands or not all(isinstance(c, str) and c.strip() for c in self.commands):
            raise ValueError("a command rule needs at least one non-empty command")
        _check_mode(self.mode)

    def matches(self, command: str) -> bool:
        command = " ".join(command.split())
        for pattern in self.commands:
            if pattern == "*":
                return True
            if pattern.endswith(" *"):
                prefix = pattern[:-2]
                if command == prefix or command.startswith(prefix + " "):
                    return True
            elif command == " ".join(pattern.split()):
                return True
        return False


Rule = PermissionRule | CommandRule

_in_tool_call: ContextVar[bool] = ContextVar("deepacp_in_tool_call", default=False)


@contextlib.contextmanager
def tool_call_scope() -> Iterator[None]:
    """Marks backend calls made by a tool the approval layer has already let run."""
    token = _in_tool_call.set(True)
    try:
        yield
    finally:
        _in_tool_call.reset(token)


def path_decision(
    rules: Sequence[PermissionRule], operation: Operation, rule_path: str
) -> RuleMode:
    for rule in rules:
        if rule.matches(operation, rule_path):
            return rule.mode
    return "allow"


def command_decision(
    rules: Sequence[CommandRule], command: str, *, path_rules_present: bool
) -> RuleMode:
    for rule in rules:
        if rule.matches(command):
            return rule.mode
    return "interrupt" if path_rules_present else "allow"


def split_rules(rules: Sequence[Rule]) -> tuple[list[PermissionRule], list[CommandRule]]:
    paths = [r for r in rules if isinstance(r, PermissionRule)]
    commands = [r for r in rules if isinstance(r, CommandRule)]
    if len(paths) + len(commands) != len(rules):
        raise TypeError("permissions must be PermissionRule or CommandRule instances")
    return paths, commands


def _rooted(workspace_path: str) -> str:
    return workspace_path if workspace_path.startswith("/") else "/" + workspace_path


class PolicedShell:
    """A shell that runs only the commands the command rules permit."""

    def __init__(self, inner: Shell, rules: Sequence[CommandRule], *, path_rules: bool) -> None:
        self.inner = inner
        self.rules = rules
        self.path_rules = path_rules

    async def execute(self, run: ShellCommand) -> ExecuteResult:
        decision = command_decision(self.rules, run.command, path_rules_present=self.path_rules)
        if decision == "deny" or (decision == "interrupt" and not _in_tool_call.get()):
            raise PermissionDenied(f"the shell policy does not permit running: {run.command}")
        return await self.inner.execute(run)


class PermissionBackend(DelegatingBackend[Backend]):
    """Wraps a backend; refuses what the rules refuse, hides what they hide from listings."""

    def __init__(self, inner: Backend, rules: Sequence[Rule]) -> None:
        super().__init__(inner)
        self.path_rules, self.command_rules = split_rules(rules)

    @property
    def shell(self) -> Shell | None:
        inner = self.inner.shell
        if inner is None:
            return None
        return PolicedShell(inner, self.command_rules, path_rules=bool(self.path_rules))

    def rule_paths(self, path: str) -> tuple[str, ...]:
        """The paths rules are matched against: as written, and where links lead."""
        lexical = _rooted(self.inner.workspace_path(path))
        try:
            resolved = _rooted(self.inner.resolved_path(path))
        except PathError:  # leads out: the operation itself refuses it
            return (lexical,)
        return (lexical,) if resolved == lexical else (lexical, resolved)

    def decision(self, operation: Operation, path: str) -> RuleMode:
        """The strictest decision of the rules for `path` and for where it leads."""
        decisions = {path_decision(self.path_rules, operation, p) for p in self.rule_paths(path)}
        return next(mode for mode in ("deny", "interrupt", "allow") if mode in decisions)

    def _allowed(self, operation: Operation, path: str) -> bool:
        decision = self.decision(operation, path)
        return decision == "allow" or (decision == "interrupt" and _in_tool_call.get())

    def _check(self, operation: Operation, path: str) -> None:
        if not self._allowed(operation, path):
            paths = self.rule_paths(path)
            where = paths[0] if len(paths) == 1 else f"{paths[0]} (which leads to {paths[1]})"
            raise PermissionDenied(f"{operation} access to {where} is not permitted")

    def _visible(self, path: str) -> bool:
        try:
            return self._allowed("read", path)
        except PathError:
            return False

    async def ls(self, path: str = "") -> list[Entry]:
        self._check("read", path)
        return [e for e in await self.inner.ls(path) if self._visible(e.path)]

    async def read_text(self, path: str) -> str:
        self._check("read", path)
        return await self.inner.read_text(path)

    async def write_text(self, path: str, content: str) -> None:
        self._check("write", path)
        await self.inner.write_text(path, content)

    async def edit(
        self, path: str, old: str, new: str, *, replace_all: bool = False
    ) -> tuple[str, str]:
        """Checked as a write alone (the text it reads is the text it changes)."""
        self._check("write", path)
        return await self.inner.edit(path, old, new, replace_all=replace_all)

    async def delete(self, path: str) -> None:
        self._check("write", path)
        await self.inner.delete(path)

    async def glob(self, pattern: str, path: str = "", *, limit: int = 1000) -> list[str]:
        self._check("read", path)
        found = await self.inner.glob(pattern, path, limit=limit * 2)
        return [p for p in found if self._visible(p)][:limit]

    async def grep(self, query: GrepQuery) -> list[GrepMatch]:
        self._check("read", query.path)
        found = await self.inner.grep(dataclasses.replace(query, limit=query.limit * 2))
        return [m for m in found if self._visible(m.path)][: query.limit]
