"""The accept-edits guard: a command (or hook) that runs without asking may change the
workspace, but not what makes code run outside the sandbox later — git's gitdir, config and
hooks, editors' project settings, deepacp's project hooks.

Two lines hold. Before the command, what exists of those is bound read-only in the sandbox
(it cannot be written, renamed or deleted; the folders between it and the root are bound to
themselves, so they cannot be renamed away with it). After the command, what it created
among the `GUARDED_PATHS` and the files git reads (`deepacp.backends.gitview`: `commondir`,
included config, alternates...) that were missing is removed — following no link, giving a
folder its owner's rights back first (`deepacp.backends.undo`) — and what git reads is
compared with what it read before. What still differs, or could not be removed, is said
plainly to the model and to the user, and the next command is asked (`GuardBreach`).
Nothing is ever written back: a file the command could not change but that changed was
changed by someone else (a command the user approved, running beside it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deepacp.backends.gitview import GitReads, git_reads, within
from deepacp.backends.undo import PathState, capture, listing, remove

GUARDED_PATHS = (
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git/info",
    ".git/modules",
    ".git/worktrees",
    ".hg",
    ".vscode",
    ".idea",
    ".zed",
    ".helix",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".deepacp/hooks.json",
)
"""The paths of a workspace root that make code run *outside* the sandbox later (git's
hooks, config and other repositories, editors' project settings and exrc files, deepacp's
project hooks; the session's CODE_EXECUTION_PATHS for the file tools). Beside them the guard
covers every place git reads from (`deepacp.backends.gitview`): the `.git` file, `commondir`,
included config files, alternates, the `core.hooksPath` folder. The rest of `.git` stays
writable, so `git add` and `git commit` work."""


class GuardBreach:
    """What a session's guard could not undo since a command was last asked: the approval
    gate asks the next command, and taking it clears it."""

    def __init__(self) -> None:
        self._what: str | None = None

    def record(self, what: str) -> None:
        self._what = what

    def take(self) -> str | None:
        what, self._what = self._what, None
        return what


@dataclass(frozen=True)
class GuardOutcome:
    """What the guard undid after a command, and what it could not (one line each)."""

    removed: tuple[Path, ...] = ()
    failed: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not (self.removed or self.failed)

    def undone(self, root: Path, what: str = "this command") -> str:
        return f"removed what {what} created in {_names(self.removed, root)}"

    def note(self, root: Path) -> str:
        """What to tell the model."""
        lines = []
        if self.removed:
            lines.append(
                f"[sandbox: {self.undone(root)}: a command that runs without asking may not "
                "change what git or an editor runs outside the sandbox later. If that is what "
                "the user wants, call execute again with outside_sandbox=true: the user is "
                "asked first.]"
            )
        if self.failed:
            lines.append(
                f"[sandbox: FAILED to undo what this command did: {'; '.join(self.failed)}. "
                "It may run outside the sandbox when git or an editor next reads it. The user "
                "has been told, and the next command will be asked.]"
            )
        return "\n".join(lines)

    def notice(self, who: str, root: Path, *, undone_too: bool = False) -> str | None:
        """What to tell the user: what could not be undone (and, with `undone_too`, what
        was); None when there is nothing to tell."""
        if self.failed:
            return (
                f"{who} ran without asking and left what git or an editor may run outside "
                f"the sandbox, which could not be undone: {'; '.join(self.failed)}. Check it "
                "before you run git or reopen the folder; the next command will be asked."
            )
        if undone_too and self.removed:
            return (
                f"{who} changed what git or an editor runs outside the sandbox; the sandbox "
                f"undid it ({self.undone(root, 'it')})."
            )
        return None


def _names(paths: Sequence[Path], root: Path) -> str:
    return ", ".join(str(p.relative_to(root)) if within(p, root) else str(p) for p in paths)


@dataclass(frozen=True)
class Sight:
    """What git run in `root` reads, in a form to compare: what git said, the files it
    reads in the workspace and the hooks folders' entries there."""

    root: Path
    said: tuple[str, ...]
    files: tuple[tuple[Path, PathState], ...]
    hooks: tuple[tuple[Path, tuple[tuple[str, PathState], ...]], ...]


Seen = tuple[Sight, ...]


@dataclass(frozen=True)
class Guard:
    """The guard of one command in the workspace `roots`: `bound` exist (and are bound
    read-only), `missing` do not (and are removed after the command if it made them)."""

    roots: tuple[Path, ...]
    bound: list[Path]
    missing: list[Path]
    seen: Seen = ()
    """What git read before the command, in a form to compare."""
    breach: GuardBreach | None = None

    def anchors(self, roots: Sequence[Path]) -> list[Path]:
        """The folders between a root and a bound path (`.git`): bound to themselves, so
        that, mount points now, they cannot be renamed away with the guarded paths inside."""
        found: dict[Path, None] = {}
        for path in self.bound:
            for parent in reversed(path.parents):
                if parent not in roots and any(within(parent, r) for r in roots):
                    found[parent] = None
        return list(found)

    def settle(self) -> GuardOutcome:
        """Undo what the command left (see the module's docstring) and say how it went;
        what could not be undone is recorded in `breach`."""
        removed: list[Path] = []
        failed: list[str] = []
        for path in self.missing:
            root = self._root_of(path)
            try:
                if remove(root, path):
                    removed.append(path)
            except OSError as exc:
                failed.append(f"{_names([path], root)} ({exc.strerror or exc})")
        if not failed and (risen := _risen(self.seen, seen(self.roots))):
            failed.append(
                f"git now reads its config, hooks or gitdir differently: {'; '.join(risen)}"
            )
        outcome = GuardOutcome(tuple(removed), tuple(failed))
        if failed and self.breach is not None:
            self.breach.record("; ".join(failed))
        return outcome

    def _root_of(self, path: Path) -> Path:
        return next(r for r in self.roots if within(path, r))


def guard_of(roots: Sequence[Path], breach: GuardBreach | None = None) -> Guard:
    """The guard of a command that runs without asking in the workspace `roots` (resolved)."""
    roots = tuple(roots)
    bound: dict[Path, None] = {}
    missing: dict[Path, None] = {}
    reads = {root: git_reads(root, roots) for root in roots}
    for root, read in reads.items():
        for path in [*(root / name for name in GUARDED_PATHS), *read.folders]:
            if path in read.files:
                continue  # a file git reads: see below
            if os.path.lexists(path):
                bound[Path(os.path.realpath(path))] = None
            elif within(path, root):
                missing[_first_missing(root, path)] = None
        for path in read.files:
            if os.path.lexists(path):
                if os.path.isfile(path):  # a `.git` link to a folder is compared, not bound
                    bound[Path(os.path.realpath(path))] = None
            elif within(path, root):
                missing[path] = None  # the file alone: the folders it is in are not git's
    inside = [p for p in bound if any(within(p, r) for r in roots)]  # elsewhere: read-only
    return Guard(roots, inside, list(missing), _seen(reads, roots), breach)


def seen(roots: Sequence[Path]) -> Seen:
    """What git run in each of `roots` reads now, in a form to compare."""
    return _seen({root: git_reads(root, roots) for root in roots}, roots)


def _seen(reads: dict[Path, GitReads], roots: Sequence[Path]) -> Seen:
    def inside(path: Path) -> Path | None:
        return next((r for r in roots if within(path, r) and path != r), None)

    return tuple(
        Sight(
            root,
            read.said,
            tuple((p, capture(r, p)) for p in read.files if (r := inside(p))),
            tuple((p, listing(r, p)) for p in read.hooks if (r := inside(p))),
        )
        for root, read in reads.items()
    )


def _risen(before: Seen, after: Seen) -> list[str]:
    """What git reads after that it did not before: new places, changed files and hooks,
    paths relative to their root (a place it no longer reads runs nothing)."""
    found: list[str] = []
    for was, now in zip(before, after, strict=True):
        prefix = f"{was.root}/"
        old_files, old_hooks = dict(was.files), dict(was.hooks)
        new = [f"{x} (new)" for x in now.said if x not in was.said]
        new += [
            f"{p} (changed)"
            for p, state in now.files
            if state.kind != "absent" and old_files.get(p) != state
        ]
        new += [
            f"{p} (changed)"
            for p, names in now.hooks
            if not set(names) <= set(old_hooks.get(p, ()))
        ]
        found += [x.replace(prefix, "") for x in new]
    return found


def _first_missing(root: Path, path: Path) -> Path:
    """The outermost folder of `path` under `root` that does not exist (`path` itself when
    its parent does)."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if not os.path.lexists(current):
            return current
    return path
