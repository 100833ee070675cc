"""Restore points: for each prompt, the conversation checkpoint before it and the content of
every workspace file the turn changed, as it was before; and the rewind that puts them back.

- `points`: `RestorePoints`, a session's points, and what is kept of each file.
- `recording`: `RecordingBackend` and `ScanningShell`, which note what the agent's file tools
  and commands change.
- `rewind`: `restore`, `conflicts`, `finish_turn`, `current`.
- `blobs`, `gitobjects`: where contents are kept (a shared blob store, git's own objects).
"""

from deepacp.session.restore.blobs import BlobStore, digest
from deepacp.session.restore.points import MissingContent, RestorePoint, RestorePoints, discard
from deepacp.session.restore.recording import RecordingBackend, ScanningShell
from deepacp.session.restore.rewind import Restored, conflicts, current, finish_turn, restore

__all__ = [
    "BlobStore",
    "MissingContent",
    "RecordingBackend",
    "RestorePoint",
    "RestorePoints",
    "Restored",
    "ScanningShell",
    "conflicts",
    "current",
    "digest",
    "discard",
    "finish_turn",
    "restore",
]
