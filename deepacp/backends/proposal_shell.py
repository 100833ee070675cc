"""Commands over a proposal: the LSP face's commands see the agent's proposed files, and
what they write joins the proposal instead of the disk.

Each command gets a fresh kernel overlay (overlayfs) of the workspace root, mounted in a
user and mount namespace of its own (util-linux `unshare -Urm`; Linux >= 5.11 lets an
unprivileged user do this), with the bubblewrap sandbox inside it. The upper layer starts
with the proposed files; proposed deletions are made inside the sandbox before the
command (they become whiteouts). The workspace is writable in the sandbox, but every
write lands in the upper layer: after the command, each file there that differs from the
proposal is written to (or deleted from) the proposal through the overlay backend, so
review, accept and reject treat it like the agent's own edits. The user's files are
never touched. Caches (`IGNORED_DIRS`, anything .gitignore'd) and the `GUARDED_PATHS`
stay out of the proposal; so does everything when the command wrote more than
`MAX_PROPOSED_FILES` files or `MAX_PROPOSED_BYTES`.

Where this cannot work (no sandbox, no `unshare`, no overlay in a user namespace)
`overlay_problem` says why once, and commands run as they did before: on the disk,
under the session's policy, with a line in their result saying so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from deepacp.backends.errors import BackendError
from deepacp.backends.guard import GUARDED_PATHS
from deepacp.backends.programs import trusted_program
from deepacp.backends.protocol import MAX_TEXT_BYTES, ExecuteResult, ShellCommand
from deepacp.backends.pysearch import is_ignored
from deepacp.backends.sandbox import Sandbox, SandboxPolicy, SandboxSetting, sandbox_problem
from deepacp.backends.shell import LocalShell, checked_timeout, command_policy, shell_argv

if TYPE_CHECKING:
    from deepacp.backends.overlay import OverlayBackend

MAX_PROPOSED_FILES = 200
MAX_PROPOSED_BYTES = 8 << 20
"""What one command may add to a proposal; past either, it adds nothing and says so."""
IGNORED_DIRS = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".git"}
)
"""Folders whose files a command writes as a by-product, never proposed (nor is anything
a .gitignore on disk ignores)."""

_MOUNT = (
    'cd "$2" && mount --bind "$1" lower && '
    "mount -t overlay overlay -o lowerdir=lower,upperdir=upper,workdir=work,userxattr "
    '"$1" && shift 2 && exec "$@"'
)
"""Run in the new namespaces: $1 the workspace root, $2 the layers' folder (whose short
names keep the workspace's path out of the mount options, where `,` and `:` mean more)."""
_DELETE_FIRST = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do rm -f -- "$1"; shift; n=$((n - 1)); done; exec "$@"'
)
"""Run in the sandbox: $1 how many paths follow to delete, then the command's argv."""
_OPAQUE = "user.overlay.opaque"


def _unshare(roots: Sequence[Path] = ()) -> str | None:
    """The unshare to run: never one a command could have planted (`trusted_program`)."""
    return trusted_program("unshare", roots)


def mounted(argv: Sequence[str], root: Path, layers: Path) -> list[str]:
    """`argv` run over an overlay of `root` whose layers are in `layers` (see `_layers`);
    a `BackendError` when no unshare may run now."""
    unshare = _unshare([root])
    if unshare is None:
        raise BackendError(
            "the command did not run: there is no unshare to run it over the proposal that "
            "only root or you can change, outside the workspace"
        )
    return [unshare, "-Urm", "/bin/sh", "-c", _MOUNT, "sh", str(root), str(layers), *argv]


def deleting_first(gone: Sequence[str], argv: Sequence[str]) -> list[str]:
    """`argv`, after deleting the workspace paths `gone` (relative to the working folder)."""
    return ["/bin/sh", "-c", _DELETE_FIRST, "sh", str(len(gone)), *gone, *argv]


def _remove(folder: Path) -> None:
    """Remove the layers, whatever modes are left in them: the kernel makes the overlay's
    work folder mode 000, which only root may enter as it is, and a command may lock what
    it made (chmod 555)."""
    for parent, dirs, _ in os.walk(folder):  # top-down: each folder opened before entered
        for name in dirs:
            path = os.path.join(parent, name)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(path).st_mode):  # never where a link leads
                    os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _layers() -> Iterator[Path]:
    """A fresh folder with the overlay's `lower` (a mount point), `upper` and `work`."""
    folder = Path(tempfile.mkdtemp(prefix="deepacp-overlay-"))
    try:
        for name in ("lower", "upper", "work"):
            (folder / name).mkdir()
        yield folder
    finally:
        _remove(folder)


@functools.cache
def overlay_problem() -> str | None:
    """Why commands cannot run over a proposal here (with the fix), or None when they can.
    Checked once per process, by writing through a real overlay in a real sandbox."""
    if problem := sandbox_problem():
        return problem
    if _unshare() is None:
        return "util-linux's unshare is not installed (Debian/Ubuntu: apt install util-linux)"
    with _layers() as layers:
        workspace = layers / "workspace"
        workspace.mkdir()
        sandbox = Sandbox(workspace, SandboxSetting("workspace-write"))
        probe = sandbox.wrap(["/bin/sh", "-c", "echo ok > probe"], "workspace-write")
        try:
            done = subprocess.run(
                mounted(probe, workspace, layers), capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the overlay could not start: {exc}"
        landed = (layers / "upper" / "probe").is_file() and not (workspace / "probe").exists()
        if done.returncode == 0 and landed:
            return None
        reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        return (
            f"the kernel cannot mount an overlay in a user namespace here ({reason}): "
            "it needs Linux 5.11 or later with unprivileged user namespaces"
        )


def materialize(upper: Path, proposed: dict[str, str | None]) -> list[str]:
    """Put the proposed files into the overlay's `upper` layer; the proposed deletions
    (to make in the sandbox, where they become whiteouts)."""
    gone = []
    for relative, text in proposed.items():
        if text is None:
            gone.append(relative)
            continue
        path = upper / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return gone


@dataclass
class Written:
    """What a command did to the files, read from the upper layer: `files` it created or
    changed (their text), `gone` it deleted (or left out of an emptied folder), and
    `skipped` it wrote that cannot be proposed (why, by path)."""

    files: dict[str, str] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)


def _guarded(relative: str) -> bool:
    return any(relative == p or relative.startswith(f"{p}/") for p in GUARDED_PATHS)


def _left_out(root: Path, relative: str, is_dir: bool) -> bool:
    """Whether a path is a by-product nobody wants proposed."""
    if any(part in IGNORED_DIRS for part in relative.split("/")):
        return True
    return is_ignored(root, relative, is_dir=is_dir)


def _lower_files(root: Path, relative: str, proposed: dict[str, str | None]) -> set[str]:
    """The files under the folder `relative` before the command: on disk, and proposed."""
    found = {p for p, text in proposed.items() if text is not None and p.startswith(relative)}
    folder = root / relative
    if folder.is_dir() and not folder.is_symlink():
        for base, _, names in os.walk(folder):
            for name in names:
                found.add((Path(base) / name).relative_to(root).as_posix())
    return {p for p in found if p.startswith(f"{relative}/")}


def read_back(root: Path, upper: Path, proposed: dict[str, str | None]) -> Written:
    """What the command wrote in `upper`, over the workspace `root` and the `proposed`
    files materialized there (see `materialize`)."""
    written = Written()
    seen: set[str] = set()

    def walk(folder: Path, prefix: str) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            relative = f"{prefix}{entry.name}"
            info = entry.stat(follow_symlinks=False)
            is_dir = stat.S_ISDIR(info.st_mode)
            seen.add(relative)
            if _left_out(root, relative, is_dir):
                continue
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:  # a whiteout
                written.gone.add(relative)
                written.gone.update(_lower_files(root, relative, proposed))
            elif is_dir:
                if _opaque(entry.path):  # emptied, then made again: the old files are gone
                    written.gone.update(_lower_files(root, relative, proposed))
                walk(Path(entry.path), f"{relative}/")
            elif _guarded(relative):
                written.skipped[relative] = "git or an editor would run it outside the sandbox"
            elif not stat.S_ISREG(info.st_mode):
                written.skipped[relative] = "not a regular file"
            elif info.st_size > MAX_TEXT_BYTES:
                written.skipped[relative] = f"larger than {MAX_TEXT_BYTES} bytes"
            else:
                try:
                    written.files[relative] = Path(entry.path).read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    written.skipped[relative] = "not UTF-8 text"

    walk(upper, "")
    written.gone -= set(written.files)
    # A proposed new file the command deleted leaves nothing behind in the upper layer.
    written.gone |= {p for p, text in proposed.items() if text is not None and p not in seen}
    written.gone = {p for p in written.gone if not _left_out(root, p, False)}
    return written


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, _OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


async def propose(overlay: OverlayBackend, written: Written) -> tuple[list[str], list[str]]:
    """Make what the command wrote part of the proposal; the paths proposed, and the
    lines saying what was not (and why)."""
    changed: dict[str, str | None] = {}
    for relative, text in written.files.items():
        if await _text(overlay, relative) != text:
            changed[relative] = text
    for relative in written.gone:
        if await _text(overlay, relative) is not None:
            changed[relative] = None
    problems = [f"{path}: {why}" for path, why in sorted(written.skipped.items())]
    size = sum(len(text.encode("utf-8")) for text in changed.values() if text is not None)
    if len(changed) > MAX_PROPOSED_FILES or size > MAX_PROPOSED_BYTES:
        problems.insert(
            0,
            f"{len(changed)} files, {size} bytes: more than a proposal takes "
            f"({MAX_PROPOSED_FILES} files, {MAX_PROPOSED_BYTES} bytes); none proposed",
        )
        return [], problems
    done = []
    for relative, new in sorted(changed.items()):
        try:
            if new is None:
                await overlay.delete(relative)
            else:
                await overlay.write_text(relative, new)
        except BackendError as exc:
            problems.append(str(exc))
        else:
            done.append(relative)
    return done, problems


async def _text(overlay: OverlayBackend, relative: str) -> str | None:
    try:
        return await overlay.read_text(relative)
    except BackendError:
        return None


def _with_note(result: ExecuteResult, note: str) -> ExecuteResult:
    return dataclasses.replace(result, output=f"{result.output}\n{note}")


class ProposalShell:
    """`shell`'s commands over the proposal of `overlay` (see the module)."""

    def __init__(self, overlay: OverlayBackend, shell: LocalShell) -> None:
        self.overlay = overlay
        self.shell = shell

    async def execute(self, run: ShellCommand) -> ExecuteResult:
        sandbox = self.shell.sandbox
        policy = command_policy(sandbox, run)
        problem = overlay_problem()
        if run.outside_sandbox:
            problem = "it ran outside the sandbox, as approved"
        elif policy in (None, "off"):
            problem = "the sandbox is off"
        if problem is not None or sandbox is None or policy is None:
            result = await self.shell.execute(run)
            if not self.overlay.proposed():
                return result
            return _with_note(
                result,
                f"[this command ran on the files on disk, not on the proposal ({problem}): "
                "it does not see the proposed changes]",
            )
        timeout = checked_timeout(run, self.shell.default_timeout)
        writable: SandboxPolicy = "workspace-write" if policy == "read-only" else policy
        proposed = self.overlay.proposed()
        root = sandbox.root.resolve()
        with _layers() as layers:
            gone = materialize(layers / "upper", proposed)
            argv = sandbox.wrap(deleting_first(gone, shell_argv(run.command)), writable)
            result = await self.shell.run_argv(mounted(argv, root, layers), timeout, run.on_output)
            written = read_back(root, layers / "upper", proposed)
        done, problems = await propose(self.overlay, written)
        note = "[sandbox: ran over the proposal, in an overlay of the workspace; "
        note += f"now proposed too: {', '.join(done)}" if done else "it proposes no file"
        if problems:
            note += f"; not proposed: {'; '.join(problems)}"
        return dataclasses.replace(_with_note(result, f"{note}]"), sandbox=writable)
