"""Restore points: for each user prompt, the conversation checkpoint before it and the
content of every workspace file the turn changed, as it was before the first change.

Contents are blobs named by their SHA-256 (a content is stored once however many turns
keep it), under `$DEEPACP_HOME/rewind/<session id>/`, next to `points.json`; the folder
goes with the session. Files are keyed by their path relative to the workspace root.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deepacp.backends.protocol import MAX_TEXT_BYTES
from deepacp.backends.pysearch import walk_files
from deepacp.private import private_dir, private_file
from deepacp.secrets import secret_values

MAX_SCAN_FILES = 50_000
"""A workspace scan looks at no more files than this (a home folder opened as a project)."""

Stamp = tuple[int, int, int, int]
"""What a scan compares: size, modification and change times (ns), inode."""


@dataclass
class RestorePoint:
    """One prompt: where the conversation was and what its files were before it."""

    prompt: str
    thread_id: str
    checkpoint_id: str | None
    """None: the thread had no checkpoint yet (the first prompt)."""
    before: dict[str, str | None] = field(default_factory=dict)
    """Per file the turn changed: the blob of its content before, None if it did not exist."""
    after: dict[str, str | None] = field(default_factory=dict)
    """Per such file: the blob of its content when the turn ended (None: gone)."""
    lost: list[str] = field(default_factory=list)
    """Files changed whose content before was not kept: too large, or holding a secret."""


def rewind_dir(home: Path, session_id: str) -> Path:
    return home / "rewind" / session_id


def discard(home: Path, session_id: str) -> None:
    """Delete a session's restore points and their blobs."""
    shutil.rmtree(rewind_dir(home, session_id), ignore_errors=True)


def _write_private(target: Path, data: bytes) -> None:
    """Write `data` to `target` (0600) through a temporary file and a rename."""
    tmp = private_file(target.with_name(f"{target.name}.tmp"))
    tmp.write_bytes(data)
    tmp.replace(target)


def known_secrets() -> list[bytes]:
    return [s.encode("utf-8") for s in secret_values()]


def holds_secret(data: bytes, secrets: list[bytes]) -> bool:
    """Whether `data` holds one of `secrets`: such content is never copied into our home."""
    return any(secret in data for secret in secrets)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RestorePoints:
    """A session's restore points, kept in `folder`; the last one is the running turn's."""

    def __init__(self, folder: Path, root: Path, hidden: Path) -> None:
        self.folder = folder
        self.root = root
        self.hidden = hidden
        """A folder not to scan even inside the workspace ($DEEPACP_HOME)."""
        self.points: list[RestorePoint] = self._load()
        self.recording: RestorePoint | None = None
        self._known: dict[str, tuple[Stamp, str]] = {}
        """Files whose content is stored: their stamp then, and their blob."""

    def _index(self) -> Path:
        return self.folder / "points.json"

    def _load(self) -> list[RestorePoint]:
        try:
            rows = json.loads(self._index().read_text(encoding="utf-8"))
            return [RestorePoint(**row) for row in rows]
        except (OSError, ValueError, TypeError):
            return []

    def save(self) -> None:
        private_dir(self.folder)
        data = json.dumps([asdict(p) for p in self.points]).encode("utf-8")
        _write_private(self.folder / "points.json", data)

    def put(self, data: bytes) -> str:
        """Store `data` (once per distinct content); returns its blob name."""
        name = digest(data)
        blobs = private_dir(self.folder / "blobs")
        target = blobs / name
        if not target.exists():
            _write_private(target, data)
        return name

    def blob(self, name: str) -> bytes:
        return (self.folder / "blobs" / name).read_bytes()

    def begin(self, prompt: str, thread_id: str, checkpoint_id: str | None) -> None:
        self.recording = RestorePoint(prompt, thread_id, checkpoint_id)
        self.points.append(self.recording)
        self.save()

    def changing(self, path: str) -> bool:
        """Whether the running turn has yet to keep `path`'s content from before it."""
        return self.recording is not None and path not in self.recording.before

    def lose(self, path: str) -> None:
        """`path`'s content before the running turn could not be kept."""
        point = self.recording
        if point is not None and self.changing(path) and path not in point.lost:
            point.lost.append(path)
            self.save()

    def note(self, path: str, blob: str | None) -> None:
        """Keep `blob` (None: no file) as `path`'s content before the running turn."""
        if self.recording is not None and self.changing(path):
            self.recording.before[path] = blob
            self.save()

    def finish(self, now: dict[str, bytes | None]) -> None:
        """The turn ended; `now` holds its files' contents at the end."""
        point, self.recording = self.recording, None
        if point is None:
            return
        point.after = {path: None if data is None else digest(data) for path, data in now.items()}
        self.save()

    def truncate(self, count: int) -> None:
        """Keep the first `count` points; blobs no point refers to any more are deleted."""
        self.points = self.points[:count]
        self.save()
        kept = {b for p in self.points for b in p.before.values() if b is not None}
        with contextlib.suppress(OSError):
            for blob in (self.folder / "blobs").iterdir():
                if blob.name not in kept:
                    blob.unlink(missing_ok=True)
        self._known = {}

    def scan(self) -> dict[str, Stamp]:
        """The workspace's files (honouring .gitignore) and their stamps."""
        stamps: dict[str, Stamp] = {}
        exclude: tuple[str, ...] = ()
        with contextlib.suppress(ValueError):
            exclude = (self.hidden.resolve().relative_to(self.root).as_posix(),)
        for path in walk_files(self.root, exclude=exclude):
            if len(stamps) >= MAX_SCAN_FILES:
                break
            with contextlib.suppress(OSError):
                info = (self.root / path).stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    stamps[path] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        return stamps

    def before_command(self) -> dict[str, Stamp]:
        """Scan before a command runs, storing the content of files not stored as they are."""
        stamps, secrets = self.scan(), known_secrets()
        for path, stamp in stamps.items():
            known = self._known.get(path)
            if (known is not None and known[0] == stamp) or stamp[0] > MAX_TEXT_BYTES:
                continue
            self._known.pop(path, None)
            with contextlib.suppress(OSError):
                data = (self.root / path).read_bytes()
                if not holds_secret(data, secrets):
                    self._known[path] = (stamp, self.put(data))
        return stamps

    def after_command(self, before: dict[str, Stamp]) -> None:
        """Note what the command created, changed or deleted (compared with `before`)."""
        after = self.scan()
        for path in before.keys() | after.keys():
            if before.get(path) == after.get(path):
                continue
            known = self._known.get(path)
            if path not in before:
                self.note(path, None)
            elif known is not None and known[0] == before[path]:
                self.note(path, known[1])
            else:
                self.lose(path)
