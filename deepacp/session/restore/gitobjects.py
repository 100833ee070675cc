"""What a git repository already holds of the workspace's files, so restore points need not
copy a tracked file that is unchanged: its content is the object the index names.

Read-only plumbing (`rev-parse`, `ls-files -s`, `cat-file blob`): the index, refs, branches
and stash are never written. The workspace is writable by the agent's commands, so the
repository's config is not trusted: no fsmonitor, no transport, no lazy fetch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from pathlib import Path

HARDENED = ("-c", "core.fsmonitor=false", "-c", "protocol.allow=never")
QUIET = {"GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0"}
TIMEOUT = 30.0

IndexStamp = tuple[int, int, int]


def object_id(data: bytes, algorithm: str) -> str:
    """The id git gives a blob holding `data` (no filters: the bytes as they are)."""
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


class GitObjects:
    """The repository (if any) that holds workspace `root`, seen from `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._located = False
        self._algorithm = "sha1"
        self._index: Path | None = None
        self._stamp: IndexStamp | None = None
        self._entries: dict[str, str] = {}

    def _git(self, *args: str) -> bytes | None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | QUIET
        try:
            done = subprocess.run(
                ["git", *HARDENED, "-C", str(self.root), *args],
                capture_output=True,
                env=env,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def _locate(self) -> None:
        self._located = True
        out = self._git("rev-parse", "--show-object-format", "--git-path", "index")
        lines = out.decode("utf-8", "surrogateescape").splitlines() if out else []
        if len(lines) == 2 and lines[0] in hashlib.algorithms_available:
            self._algorithm, self._index = lines[0], self.root / lines[1]

    def entries(self) -> dict[str, str]:
        """Tracked regular files (paths relative to the root) and the index's object ids."""
        if not self._located:
            self._locate()
        if self._index is None:
            return {}
        try:
            info = self._index.stat()
        except OSError:
            return {}
        stamp = (info.st_size, info.st_mtime_ns, info.st_ino)
        if stamp != self._stamp:
            self._stamp, self._entries = stamp, {}
            for line in (self._git("ls-files", "-s", "-z") or b"").split(b"\0"):
                with contextlib.suppress(ValueError):
                    meta, name = line.split(b"\t", 1)
                    mode, oid, stage = meta.split(b" ")
                    if mode in (b"100644", b"100755") and stage == b"0":
                        self._entries[name.decode("utf-8", "surrogateescape")] = oid.decode()
        return self._entries

    def clean(self, path: str, data: bytes) -> str | None:
        """The object id of `path` when it is tracked and `data` is what the index holds."""
        oid = self.entries().get(path) if data else None
        return oid if oid is not None and object_id(data, self._algorithm) == oid else None

    def read(self, oid: str) -> bytes | None:
        """The content of blob `oid`; None when the repository no longer has it."""
        return self._git("cat-file", "blob", oid)
