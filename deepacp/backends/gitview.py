"""What git reads, run in a workspace root, that decides which programs it runs: the gitdir
(`.git` as a folder, or a file naming one), the common dir its `commondir` names, the config
files (`config`, `config.worktree`, the files they include), the hooks folder
(`core.hooksPath`), the other repositories' places (`modules/`, `worktrees/`), `info/`
and the object stores `alternates` names.

The same for each submodule checkout in the index: `git status` looks into them.

Worked out twice and joined: by git's rules, here, so it holds without git installed; and
by asking git itself (`rev-parse`, `config --list --show-origin`, `ls-files --stage`), so
that what git really reads counts, whatever rule we missed. The git asked is `find_git`'s
(never one a command could plant), its environment has no `GIT_*` variable but the user's config
choices, it runs no fsmonitor, and it only reads. Only regular files are read here (a
command may leave a FIFO where git expects a file).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deepacp.backends.programs import trusted_program

GIT_TIMEOUT = 10.0
KEPT_GIT_ENV = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"})
"""The `GIT_*` variables passed to the git we ask: where the user's own config lives."""
QUIET_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1"}
COMMON_FILES = ("config", "objects/info/alternates", "objects/info/http-alternates")
COMMON_FOLDERS = ("hooks", "info", "modules", "worktrees")
OWN_FILES = ("commondir", "config", "config.worktree")
"""What git reads from a gitdir's common dir (the repository) and from the gitdir itself
(the worktree's)."""


@dataclass(frozen=True)
class GitReads:
    """The places git reads from in one workspace root (absolute paths, links resolved;
    present or not)."""

    files: tuple[Path, ...]
    """Files whose bytes decide what git runs or where it looks: the `.git` file, the
    `commondir` files, config files, alternates."""
    folders: tuple[Path, ...]
    """Folders of programs git runs (`hooks`) or of more repositories and their settings."""
    hooks: tuple[Path, ...]
    """The hooks folders among `folders`."""
    said: tuple[str, ...]
    """What git itself said, to compare: its gitdir, common dir and hooks folder, the config
    files it reads in the workspace and the submodules it looks into (empty when there is
    no git to ask)."""


def within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def git_reads(root: Path, roots: Sequence[Path]) -> GitReads:
    """What git run in `root` reads; `roots` are the workspace roots (no git inside them is
    run)."""
    files: dict[Path, None] = {}
    folders: dict[Path, None] = {}
    hooks: dict[Path, None] = {}
    _add_checkout(root, files, folders, hooks)
    answer = _ask_git(root, roots)
    if answer is not None:
        _add_repository(answer.gitdir, answer.common, files, folders, hooks)
        hooks[answer.hooks] = None
        folders[answer.hooks] = None
        files.update(dict.fromkeys(answer.configs))
        for submodule in answer.submodules:  # `git status` looks into them
            _add_checkout(submodule, files, folders, hooks)
    said = () if answer is None else answer.said(roots)
    return GitReads(tuple(files), tuple(folders), tuple(hooks), said)


def _add_checkout(
    top: Path, files: dict[Path, None], folders: dict[Path, None], hooks: dict[Path, None]
) -> None:
    gitfile, gitdir = _gitdir(top)
    if gitfile is not None:
        files[gitfile] = None
    if gitdir is not None:
        _add_repository(gitdir, _common_dir(gitdir), files, folders, hooks)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _gitdir(root: Path) -> tuple[Path | None, Path | None]:
    """The `.git` of `root` when it is a file or a link (None: a folder or nothing), and the
    gitdir it names, leads to or is."""
    dotgit = root / ".git"
    if dotgit.is_dir():
        return (dotgit if dotgit.is_symlink() else None), _real(dotgit)
    if dotgit.is_file():
        first = _first_line(dotgit)
        if not first.startswith("gitdir:"):
            return dotgit, None
        return dotgit, _real(root / first.removeprefix("gitdir:").strip())
    return (dotgit if dotgit.is_symlink() else None), None


def _common_dir(gitdir: Path) -> Path:
    named = _first_line(gitdir / "commondir")
    return _real(gitdir / named) if named else gitdir


def _first_line(path: Path) -> str:
    """The first line of the regular file `path`, stripped ("" for anything else)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return file.read(4096).decode("utf-8", "replace").split("\n", 1)[0].strip()


def _add_repository(
    gitdir: Path,
    common: Path,
    files: dict[Path, None],
    folders: dict[Path, None],
    hooks: dict[Path, None],
) -> None:
    for name in OWN_FILES:
        files[_real(gitdir / name)] = None
    for name in COMMON_FILES:
        files[_real(common / name)] = None
    for name in COMMON_FOLDERS:
        folders[_real(common / name)] = None
    hooks[_real(common / "hooks")] = None


def find_git(roots: Sequence[Path]) -> str | None:
    """The git deepacp runs outside the sandbox (this module, restore points): the first on
    PATH outside every workspace root that only root or the user can change
    (`deepacp.backends.programs`), or None."""
    return trusted_program("git", roots)


def _git(git: str, root: Path, *args: str) -> bytes | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT_GIT_ENV}
    try:
        done = subprocess.run(
            [git, "-c", "core.fsmonitor=false", *args],
            cwd=root,
            capture_output=True,
            env=env | QUIET_GIT_ENV,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass(frozen=True)
class _Answer:
    """What git said about a workspace root (absolute paths, links resolved)."""

    gitdir: Path
    common: Path
    hooks: Path
    configs: tuple[Path, ...]
    """The config files it reads, and the files they name to include (read or not)."""
    submodules: tuple[Path, ...]
    """The checkouts of the index's submodules (gitlinks) that have a `.git`."""

    def said(self, roots: Sequence[Path]) -> tuple[str, ...]:
        """All of it as text, but the config files outside `roots` (which only the user
        changes)."""
        configs = (p for p in self.configs if any(within(p, r) for r in roots))
        places = (self.gitdir, self.common, self.hooks, *configs)
        return (*map(str, places), *(f"submodule {p}" for p in self.submodules))


def _ask_git(root: Path, roots: Sequence[Path]) -> _Answer | None:
    """Git's own answer (None: no git, or no repository here)."""
    git = find_git(roots)
    if git is None:
        return None
    where = _git(
        git,
        root,
        "rev-parse",
        "--path-format=absolute",
        "--git-dir",
        "--git-common-dir",
        "--git-path",
        "hooks",
        "--git-path",
        "index",
        "--show-cdup",
    )
    lines = where.decode("utf-8", "surrogateescape").splitlines() if where else []
    if len(lines) not in (4, 5):  # no top level in a bare repository
        return None
    gitdir, common, hooks, index = (_real(Path(line)) for line in lines[:4])
    listing = _git(git, root, "config", "--list", "--show-origin", "-z") or b""
    configs = _config_files(root, listing.decode("utf-8", "surrogateescape"))
    top = _real(root / lines[4]) if len(lines) == 5 else None
    found = _submodules(git, top, index) if top is not None else ()
    submodules = tuple(p for p in found if os.path.lexists(p / ".git"))
    return _Answer(gitdir, common, hooks, tuple(map(_real, configs)), submodules)


_gitlinks: dict[Path, tuple[tuple[int, int, int], tuple[Path, ...]]] = {}
"""The submodules of each index last listed, by the index's size, time and inode."""


def _submodules(git: str, top: Path, index: Path) -> tuple[Path, ...]:
    """The gitlinks (submodules) the index at `index` holds, as paths under `top`."""
    try:
        info = index.stat()
    except OSError:
        return ()
    stamp = (info.st_size, info.st_mtime_ns, info.st_ino)
    if (known := _gitlinks.get(index)) is not None and known[0] == stamp:
        return known[1]
    listing = _git(git, top, "ls-files", "--stage", "-z") or b""
    found = []
    for line in listing.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, name = line.partition("\t")
        if meta.startswith("160000 "):
            found.append(top / name)
    _gitlinks[index] = (stamp, tuple(found))
    return tuple(found)


def _config_files(root: Path, listing: str) -> list[Path]:
    """The config files in a `git config --list --show-origin -z` listing, and the files
    their `include.path` and `includeIf.*.path` entries name (read or not)."""
    found: dict[Path, None] = {}
    fields = listing.split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        if not origin.startswith("file:"):
            continue
        source = root / origin.removeprefix("file:")
        found[source] = None
        key, _, value = entry.partition("\n")
        if key.startswith(("include.", "includeif.")) and key.endswith(".path") and value:
            included = Path(value).expanduser()
            found[included if included.is_absolute() else source.parent / included] = None
    return list(found)
