"""Saved replays (deepacp/session/replays.py): events read back equal, and only under the
key they were saved with."""

from __future__ import annotations

from pathlib import Path

from deepacp.events import ToolStarted
from deepacp.session.replays import Replays
from tests.support.events import SAMPLE_EVENTS as EVENTS

KEY = {"format": 1, "thread": "t", "checkpoint": "c+0", "roots": ["/w"], "code": "x"}


def test_events_read_back_equal(tmp_path: Path) -> None:
    replays = Replays(tmp_path)
    replays.save("s", KEY, EVENTS)
    assert replays.is_saved("s", KEY)
    read = replays.read("s", KEY)
    assert read == EVENTS
    edit = next(e for e in read if isinstance(e, ToolStarted) and e.locations)
    assert isinstance(edit.locations, tuple) and isinstance(edit.args["items"], list)


def test_only_the_same_key_reads_it(tmp_path: Path) -> None:
    replays = Replays(tmp_path)
    replays.save("s", KEY, EVENTS)
    for change in ({"checkpoint": "d+0"}, {"roots": ["/w", "/more"]}, {"code": "y"}):
        other = {**KEY, **change}
        assert replays.read("s", other) is None
        assert not replays.is_saved("s", other)
    assert replays.read("s", None) is None


def test_a_damaged_file_is_read_the_long_way(tmp_path: Path) -> None:
    replays = Replays(tmp_path)
    replays.save("s", KEY, EVENTS)
    path = tmp_path / "cache" / "replays" / "s.json"
    assert path.stat().st_mode & 0o077 == 0  # a conversation: the user's eyes only
    head = path.read_bytes().split(b"\n")[0]
    path.write_bytes(head + b'\n[{"@": "Nonsense", "fields": {}}]')
    assert replays.read("s", KEY) is None
    path.write_bytes(b"not json")
    assert replays.read("s", KEY) is None
    replays.forget("s")
    assert not path.exists()


def test_no_checkpoint_no_key(tmp_path: Path) -> None:
    assert Replays(tmp_path).key("t", ["/w"]) is None
