"""Restore points: for each user prompt, the conversation checkpoint before it and the
content of every workspace file the turn changed, as it was before the first change.

A session's points are `$DEEPACP_HOME/rewind/sessions/<session id>/points.json`; the
contents are blobs in the store all sessions share (`blobs.py`), except a tracked file
git holds unchanged, kept as the id of its git object. Files are keyed by their path
relative to the workspace root. What a command changed is found by scanning around it
(`scan.py`): the files git does not hold unchanged are read before it, so their content
then can be kept.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deepacp.backends.errors import BackendError
from deepacp.backends.nofollow import read_file
from deepacp.backends.protocol import MAX_TEXT_BYTES
from deepacp.private import private_dir, write_private
from deepacp.secrets import secret_values
from deepacp.session.restore.blobs import HELD, BlobStore, digest, sessions_dir, shared_blobs
from deepacp.session.restore.gitobjects import GitObjects
from deepacp.session.restore.scan import Scanner, Snapshot, Stamp, changed


class MissingContent(Exception):
    """A kept content is gone (a git object pruned, a blob deleted by hand)."""


@dataclass
class RestorePoint:
    """One prompt: where the conversation was and what its files were before it."""

    prompt: str
    thread_id: str
    checkpoint_id: str | None
    """None: the thread had no checkpoint yet (the first prompt)."""
    before: dict[str, str | None] = field(default_factory=dict)
    """Per file the turn changed: the SHA-256 of its content before, None if it did not
    exist."""
    after: dict[str, str | None] = field(default_factory=dict)
    """Per such file: the SHA-256 of its content when the turn ended (None: gone)."""
    lost: list[str] = field(default_factory=list)
    """Files changed whose content before was not kept: too large, holding a secret, or
    over the storage budget."""
    git: dict[str, str] = field(default_factory=dict)
    """Contents in `before` that git holds and the blob store does not: their object ids."""
    message_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """The prompt's id in the protocol (`_session/rewind`, `_session/edit_prompt`)."""


def discard(home: Path, session_id: str) -> None:
    """Delete a session's restore points, and the blobs no other session refers to."""
    shutil.rmtree(sessions_dir(home) / session_id, ignore_errors=True)
    shared_blobs(home).sweep(sessions_dir(home))


def known_secrets() -> list[bytes]:
    return [s.encode("utf-8") for s in secret_values()]


def holds_secret(data: bytes, secrets: list[bytes]) -> bool:
    """Whether `data` holds one of `secrets`: such content is never copied into our home."""
    return any(secret in data for secret in secrets)


class RestorePoints:
    """A session's restore points; the last one is the running turn's."""

    def __init__(
        self, home: Path, session_id: str, root: Path, blobs: BlobStore | None = None
    ) -> None:
        self.home = home
        """Also a folder not to scan even inside the workspace."""
        self.folder = sessions_dir(home) / session_id
        self.root = root
        self.blobs = blobs or shared_blobs(home)
        self.git = GitObjects(root)
        exclude: tuple[str, ...] = ()
        with contextlib.suppress(ValueError):
            exclude = (home.resolve().relative_to(root).as_posix(),)
        self.scanner = Scanner(root, self.git, exclude)
        self.points: list[RestorePoint] = self._load()
        self.recording: RestorePoint | None = None
        self._rows: dict[str, tuple[RestorePoint, str]] = {}
        """Ended turns' points as JSON, by message id."""
        self.scanning = threading.Lock()
        """Held by a scan around a command: the scans of commands run at once take turns."""
        self._known: dict[str, tuple[Stamp, str]] = {}
        """Files whose content is kept: their stamp then, and the content's SHA-256."""
        self._in_git: dict[str, str] = {}
        """Contents kept as git objects: their object ids."""
        self._saves: list[bool] | None = None
        """While saves wait (`_saving_once`): whether one was asked."""

    def _index(self) -> Path:
        return self.folder / "points.json"

    def _load(self) -> list[RestorePoint]:
        try:
            data = json.loads(self._index().read_text(encoding="utf-8"))
            return [RestorePoint(**row) for row in data["points"]]
        except (OSError, ValueError, TypeError, KeyError):
            return []

    def _held(self) -> list[str]:
        """Blobs this process keeps for files not yet changed: a sweep must leave them."""
        return sorted({name for _, name in self._known.values() if name not in self._in_git})

    def save(self) -> None:
        if self._saves is not None:
            self._saves.append(True)
            return
        private_dir(self.folder)
        rows = ", ".join(self._row(p) for p in self.points)
        write_private(self._index(), f'{{"points": [{rows}]}}'.encode())

    @contextlib.contextmanager
    def _saving_once(self) -> Iterator[None]:
        """Save once at the end however many changes are noted (a command that changed
        thousands of files)."""
        self._saves = []
        try:
            yield
        finally:
            asked, self._saves = self._saves, None
            if asked:
                self.save()

    def _row(self, point: RestorePoint) -> str:
        """A point as JSON. An ended turn's point no longer changes, so it is encoded once
        (a long session saves its points twice a turn)."""
        if point is self.recording:
            return json.dumps(asdict(point))
        known = self._rows.get(point.message_id)
        if known is None or known[0] is not point:
            known = self._rows[point.message_id] = (point, json.dumps(asdict(point)))
        return known[1]

    def _save_held(self) -> None:
        """Kept apart from the points: it can name every file of a large workspace."""
        private_dir(self.folder)
        write_private(self.folder / HELD, json.dumps(self._held()).encode("utf-8"))

    def keep(
        self,
        path: str,
        data: bytes,
        secrets: list[bytes] | None = None,
        objects: Mapping[str, str] | None = None,
    ) -> str | None:
        """Keep `data` as a content of `path`: its SHA-256, or None when it was not kept
        (it holds a secret, or would exceed the budget). `objects`: the index's tracked
        files, when the caller keeps many files (else they are asked for)."""
        if holds_secret(data, known_secrets() if secrets is None else secrets):
            return None
        oid = self.git.clean(path, data, objects)
        if oid is None:
            return self.blobs.put(data)
        name = digest(data)
        self._in_git[name] = oid
        return name

    def blob(self, name: str) -> bytes:
        """A kept content, or `MissingContent`."""
        data = self.blobs.get(name)
        if data is None:
            oid = self._oid(name)
            data = None if oid is None else self.git.read(oid)
        if data is None or digest(data) != name:
            raise MissingContent(name)
        return data

    def from_git(self, names: Iterable[str]) -> dict[str, bytes]:
        """The kept contents among `names` that git holds, read in one go (those gone are
        left out: `blob` says so)."""
        oids = {name: self._oid(name) for name in names if not self.blobs.has(name)}
        read = self.git.read_many({oid for oid in oids.values() if oid}, MAX_TEXT_BYTES)
        found = {name: read.get(oid) for name, oid in oids.items() if oid}
        return {name: data for name, data in found.items() if data and digest(data) == name}

    def _oid(self, name: str) -> str | None:
        return next((p.git[name] for p in self.points if name in p.git), None)

    def begin(self, prompt: str, thread_id: str, checkpoint_id: str | None) -> str:
        """Start the running turn's restore point; returns its message id."""
        self.recording = RestorePoint(prompt, thread_id, checkpoint_id)
        self.points.append(self.recording)
        self.save()
        return self.recording.message_id

    def target(self, late: bool = False) -> RestorePoint | None:
        """The point a change made now is kept in: the running turn's; for a `late` change
        (a background task's) made between turns, the last one, as if its turn went on."""
        if self.recording is not None or not late:
            return self.recording
        return self.points[-1] if self.points else None

    def changing(self, path: str, point: RestorePoint | None = None) -> bool:
        """Whether the running turn (or `point`) has yet to keep `path`'s content from
        before it."""
        point = point or self.recording
        return point is not None and path not in point.before

    def lose(self, path: str, point: RestorePoint | None = None) -> None:
        """`path`'s content before the running turn (or `point`) could not be kept."""
        point = point or self.recording
        if point is not None and self.changing(path, point) and path not in point.lost:
            point.lost.append(path)
            self.save()

    def note(self, path: str, blob: str | None, point: RestorePoint | None = None) -> None:
        """Keep `blob` (None: no file) as `path`'s content before the running turn (or
        `point`)."""
        point = point or self.recording
        if point is not None and self.changing(path, point):
            point.before[path] = blob
            if blob in self._in_git:
                point.git[blob] = self._in_git[blob]
            self.save()

    def settle(self, point: RestorePoint, path: str, data: bytes | None) -> None:
        """A late change to `path` left `data` (None: no file): when `point`'s turn has
        ended, that is what its turn left, so a rewind does not take it for the user's."""
        if point is not self.recording and path in point.before:
            point.after[path] = None if data is None else digest(data)
            self.save()

    def finish(self, now: dict[str, bytes | None]) -> None:
        """The turn ended; `now` holds its files' contents at the end."""
        point, self.recording = self.recording, None
        if point is None:
            return
        point.after = {path: None if data is None else digest(data) for path, data in now.items()}
        self.save()

    def truncate(self, count: int) -> None:
        """Keep the first `count` points; blobs no session refers to any more are deleted."""
        self.points = self.points[:count]
        self._rows = {}
        self._known = {}
        self.save()
        self._save_held()
        self.blobs.sweep(sessions_dir(self.home))

    def copy_to(self, session_id: str, threads: dict[str, str]) -> None:
        """Give session `session_id` these restore points (the blobs are shared), naming
        the checkpoints of each thread by its copy in `threads`."""
        copy = RestorePoints(self.home, session_id, self.root, self.blobs)
        copy.points = [
            RestorePoint(**{**asdict(p), "thread_id": threads.get(p.thread_id, p.thread_id)})
            for p in self.points
        ]
        copy.save()

    def release(self) -> None:
        """The session closes: the blobs kept for files not yet changed are no longer held,
        and the workspace is no longer watched."""
        self.scanner.closed = True  # a scan running now lets it go as it ends
        if self.scanning.acquire(blocking=False):
            try:
                self.scanner.close()
            finally:
                self.scanning.release()
        if self._known:
            self._known = {}
            self._save_held()

    def before_command(self) -> Snapshot:
        """Scan before a command runs, storing the content of files not stored as they are
        (git's objects hold the others)."""
        snapshot, secrets, held = self.scanner.scan(), known_secrets(), self._held()
        objects = self.git.objects()  # once: asking is a look at every folder above the root
        for path, stamp in snapshot.stamps.items():
            known = self._known.get(path)
            if stamp is None or (known is not None and known[0] == stamp):
                continue
            self._known.pop(path, None)
            if stamp[0] > MAX_TEXT_BYTES:
                continue
            with contextlib.suppress(BackendError, OSError):  # gone, or a link or FIFO now
                data = read_file(self.root, path, MAX_TEXT_BYTES)
                name = self.keep(path, data, secrets, objects)
                if name is not None:
                    self._known[path] = (stamp, name)
        if self._held() != held:
            self._save_held()
        return snapshot

    def after_command(self, before: Snapshot, point: RestorePoint | None = None) -> list[str]:
        """Note what the command created, changed or deleted (compared with `before`) in
        the running turn's point (or `point`); the files it changed."""
        found = changed(before, self.scanner.scan(), self.root)
        in_git: dict[str, str] = {}
        with self._saving_once():
            for path in found:
                was, known = before.state(path), self._known.get(path)
                if was is None:
                    self.note(path, None, point)
                elif isinstance(was, str):
                    in_git[path] = was
                elif known is not None and known[0] == was:
                    self.note(path, known[1], point)
                else:
                    self.lose(path, point)
            self._note_objects(in_git, point)
        return found

    def _note_objects(self, files: dict[str, str], point: RestorePoint | None) -> None:
        """Note the git objects `files` held before (path -> object id) as their content."""
        contents = self.git.read_many(files.values(), MAX_TEXT_BYTES) if files else {}
        secrets = known_secrets()
        for path, oid in files.items():
            data = contents.get(oid)
            if data is None or holds_secret(data, secrets):
                self.lose(path, point)  # pruned, too large, or holding a secret
                continue
            name = digest(data)
            if data:
                self._in_git[name] = oid
            elif self.blobs.put(data) is None:  # git may hold no object for no bytes
                self.lose(path, point)
                continue
            self.note(path, name, point)
