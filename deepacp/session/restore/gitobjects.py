"""What a git repository already knows of the workspace's files, so restore points neither
copy a tracked file that is unchanged nor read the whole workspace to find what a command
changed: the index (each file's object, and the size git saw on disk), the objects, and
which files differ from the index (git's stat cache does that work).

Read-only (`rev-parse`, `config --get-regexp`, `check-ignore`, `ls-files`, `cat-file`), run
as `gitrun` says: the index, refs, branches and stash are never written, and nothing the
repository's config names is run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

from deepacp.session.restore.gitrun import Git, without_filters

MAX_LISTED = 1_000_000
"""More untracked files than this and git's answer is not used (the walk, capped, is)."""
REGULAR = ("100644", "100755")
GITLINK = "160000"
ENTRY = re.compile(
    rb"([A-Za-z]) (\d{6}) ([0-9a-f]+) (\d)\t([^\0]*)\0"
    rb"  ctime: \d+:\d+\n  mtime: \d+:\d+\n  dev: \d+\tino: \d+\n"
    rb"  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n"
)
"""One entry of `ls-files -s -v --debug -z`: tag, mode, object, stage, path; then the stat
git saw, of which the size is used."""
CHECKED = "%(objectname) %(objecttype) %(objectsize)"

FileStamp = tuple[int, int, int, int]


def object_id(data: bytes, algorithm: str) -> str:
    """The id git gives a blob holding `data` (no filters: the bytes as they are)."""
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def decode(raw: bytes) -> str:
    return os.fsdecode(raw)


@dataclass(frozen=True)
class Repository:
    """Where git finds the workspace root."""

    top: Path
    prefix: str
    """The root relative to the top of the work tree ("" or "sub/dir/")."""
    index: Path
    algorithm: str


class Entry(NamedTuple):
    """One path of the index."""

    mode: str
    oid: str
    stage: str
    tag: str
    """`ls-files -t -v`'s: `H` cached, `S` skip-worktree, lower case when assume-unchanged."""
    size: int
    """The size git saw on disk when it last cached the file's stat (mod 2**32)."""


@dataclass
class Index:
    """The index as listed at one time, paths relative to the workspace root."""

    stamp: FileStamp | None
    entries: dict[str, Entry]
    trust: tuple[dict[str, str], frozenset[str]] | None = None
    """`GitObjects.trusted`'s answer, once asked."""

    @cached_property
    def objects(self) -> dict[str, str]:
        """Tracked regular files (stage 0) and their object ids."""
        return {p: e.oid for p, e in self.entries.items() if e.mode in REGULAR and e.stage == "0"}

    @cached_property
    def gitlinks(self) -> tuple[str, ...]:
        """The submodules' folders."""
        return tuple(p for p, e in self.entries.items() if e.mode == GITLINK)


@dataclass(frozen=True)
class Changes:
    """What differs from the index, as `ls-files -m` and `ls-files -o` say."""

    modified: frozenset[str]
    """Tracked paths whose file differs from the index or is gone."""
    untracked: tuple[str, ...]
    """Files not in the index and not .gitignore'd."""
    nested: tuple[str, ...]
    """Folders holding another repository (not looked into by git)."""


class GitObjects:
    """The repository (if any) that holds workspace `root`, seen from `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git = Git(root)
        self.repository: Repository | None = None
        """Where git found the root last (`locate`)."""
        self._place: tuple[tuple[int, int, int] | None, ...] | None = None
        """What `locate`'s answer depends on, as it was then (`_place`)."""
        self._index: Index | None = None
        self._sizes: dict[str, int] = {}
        """Objects' sizes (an object never changes)."""

    def _where(self) -> tuple[tuple[int, int, int] | None, ...]:
        """The `.git` and `.gitignore` of the root and each folder above it, as they are
        now: what decides whether git finds a repository here, and whether it ignores the
        root (a command may make or remove a repository)."""
        found: list[tuple[int, int, int] | None] = []
        for folder in (self.root, *self.root.parents):
            for name in (".git", ".gitignore"):
                try:
                    info = os.lstat(folder / name)
                    found.append((info.st_ino, info.st_mtime_ns, info.st_ctime_ns))
                except OSError:
                    found.append(None)
        return tuple(found)

    def moved(self) -> bool:
        """Whether `locate` may answer otherwise now (or was never asked)."""
        return self._place is None or self._where() != self._place

    def ignored_folders(self) -> list[str]:
        """The folders under the root that git ignores as a whole (none outside git)."""
        if self.locate() is None:
            return []
        args = ("ls-files", "-o", "-i", "--directory", "--exclude-per-directory=.gitignore")
        out = self.git.run(*args, "-z") or b""
        return [decode(p) for p in out.split(b"\0") if p.endswith(b"/")]

    def locate(self) -> Repository | None:
        """Where git finds the root (asked again only when a `.git` or `.gitignore` of the
        root or above it changed); None outside a work tree, or when its repository
        ignores the root."""
        place = self._where()
        if place == self._place:
            return self.repository
        self._place, self.repository = place, None
        out = self.git.run(
            "rev-parse",
            "--show-object-format",
            "--show-prefix",
            "--path-format=absolute",
            "--git-path",
            "index",
            "--show-toplevel",
        )
        lines = decode(out).split("\n") if out else []
        if len(lines) != 5 or lines[0] not in hashlib.algorithms_available or lines[4]:
            return None
        if (
            lines[1]
            and self.git.finish(self.git.start(("check-ignore", "-q", "--no-index", ".")))[0] != 1
        ):
            return None  # a workspace in the repository's `build/`: git lists none of it
        self.repository = Repository(Path(lines[3]), lines[1], Path(lines[2]), lines[0])
        return self.repository

    def index(self, repository: Repository | None = None) -> Index | None:
        """The index, listed again only when its file changed; None: no repository or git."""
        repository = repository or self.locate()
        if repository is None:
            return None
        try:
            info = repository.index.stat()
            stamp: FileStamp | None = (
                info.st_size,
                info.st_mtime_ns,
                info.st_ctime_ns,
                info.st_ino,
            )
        except OSError:
            stamp = None  # no index yet: nothing was ever added
        if self._index is not None and stamp is not None and self._index.stamp == stamp:
            return self._index
        out = self.git.run("ls-files", "-s", "-v", "--debug", "-z")
        if out is None:
            return None
        entries, end = {}, 0
        for match in ENTRY.finditer(out):
            if match.start() != end:
                return None  # not the listing this parser knows
            end = match.end()
            tag, mode, oid, stage, path, size = match.groups()
            entries[os.fsdecode(path)] = Entry(
                mode.decode(), oid.decode(), stage.decode(), tag.decode(), int(size)
            )
        if end != len(out):
            return None
        self._index = Index(stamp, entries)
        return self._index

    def objects(self) -> dict[str, str]:
        """Tracked regular files (paths relative to the root) and the index's object ids."""
        index = self.index()
        return {} if index is None else index.objects

    def trusted(self, index: Index) -> tuple[dict[str, str], frozenset[str]]:
        """The tracked files whose bytes are their object when git finds them unchanged
        (path -> object id), and the tracked files git may find unchanged when they are
        not: flagged to be skipped or assumed unchanged, in conflict, or converted on the
        way in or out (line endings, a filter: the size git saw on disk is not the
        object's)."""
        if index.trust is not None:
            return index.trust
        sizes = self.sizes(index.objects.values())
        trusted, watched = {}, set()
        for path, entry in index.entries.items():
            if entry.mode not in REGULAR:
                continue
            size = sizes.get(entry.oid)
            plain = entry.tag == "H" and entry.stage == "0"
            if plain and size is not None and size % 2**32 == entry.size:
                trusted[path] = entry.oid
            else:
                watched.add(path)
        index.trust = (trusted, frozenset(watched))
        return index.trust

    def sizes(self, oids: Iterable[str]) -> dict[str, int]:
        """The sizes of objects `oids` (those missing from the repository are left out)."""
        wanted = sorted(set(oids) - self._sizes.keys())
        if wanted:
            query = "".join(f"{oid}\n" for oid in wanted).encode()
            out = self.git.run("cat-file", "--buffer", f"--batch-check={CHECKED}", stdin=query)
            for line in (out or b"").decode("ascii", "replace").splitlines():
                oid, _, size = line.partition(" blob ")
                if size.isdigit():
                    self._sizes[oid] = int(size)
        return self._sizes

    def changes(self) -> Changes | None:
        """What differs from the index now; None when git cannot say."""
        found = self.git.run("config", "-z", "--name-only", "--get-regexp", r"^filter\.")
        keys = decode(found or b"").split("\0")
        config = without_filters([k[len("filter.") : k.rfind(".")] for k in keys if k])
        args = ("ls-files", "-m", "-o", "-t", "--exclude-per-directory=.gitignore", "-z")
        status, out = self.git.finish(self.git.start(args, config))
        if status != 0:
            return None
        modified: list[str] = []
        listed: list[str] = []
        for entry in out.split(b"\0"):  # "? path" untracked, else a tag and a changed path
            if entry[1:2] == b" ":
                (listed if entry[:1] == b"?" else modified).append(decode(entry[2:]))
        if len(listed) > MAX_LISTED:
            return None
        return Changes(
            frozenset(modified),
            tuple(p for p in listed if not p.endswith("/")),
            tuple(p.rstrip("/") for p in listed if p.endswith("/")),
        )

    def clean(self, path: str, data: bytes, objects: Mapping[str, str] | None = None) -> str | None:
        """The object id of `path` when it is tracked and `data` is what the index holds
        (`objects`: the index's, as `objects` gave them)."""
        if not data:
            return None
        oid = (self.objects() if objects is None else objects).get(path)
        algorithm = self.repository.algorithm if self.repository else "sha1"
        return oid if oid is not None and object_id(data, algorithm) == oid else None

    def read(self, oid: str) -> bytes | None:
        """The content of blob `oid`; None when the repository no longer has it."""
        return self.git.run("cat-file", "blob", oid)

    def read_many(self, oids: Iterable[str], limit: int) -> dict[str, bytes]:
        """The contents of the blobs `oids` no larger than `limit` bytes (those missing or
        larger are left out), in one `cat-file --batch`."""
        oids = set(oids)
        sizes = self.sizes(oids)
        wanted = sorted(oid for oid in oids if sizes.get(oid, limit + 1) <= limit)
        out = self.git.run(
            "cat-file", "--buffer", "--batch", stdin="".join(f"{o}\n" for o in wanted).encode()
        )
        found: dict[str, bytes] = {}
        at = 0
        with contextlib.suppress(ValueError):  # a listing cut short: what came before it
            while out and at < len(out):
                end = out.index(b"\n", at)
                header = out[at:end].decode("ascii", "replace").split(" ")
                at = end + 1
                if len(header) == 3:  # else "<oid> missing"
                    size = int(header[2])
                    found[header[0]] = out[at : at + size]
                    at += size + 1
        return found
