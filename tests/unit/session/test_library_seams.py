"""The two places deepacp leans on a library's inside: each fails here, loudly, the day the
library changes under it (not as a slower turn or a silently stale replay)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langchain_core.callbacks import BaseCallbackHandler


def test_the_tools_stream_still_skips_model_calls() -> None:
    """turn.py turns on `ignore_chat_model` for LangGraph's tools-stream handler: that
    handler still exists, still has no chat-model callback of its own (or the transcript
    is rendered at every model call for nothing), and the switch is on."""
    from langgraph.pregel._tools import StreamToolCallHandler

    import deepacp.session.turns.turn  # noqa: F401 (applies the switch)

    assert issubclass(StreamToolCallHandler, BaseCallbackHandler)
    assert "on_chat_model_start" not in vars(StreamToolCallHandler)
    assert StreamToolCallHandler.ignore_chat_model is True
    assert any(hasattr(StreamToolCallHandler, hook) for hook in ("on_tool_start",))


async def test_the_sqlite_savers_tables_are_as_replays_read_them(tmp_path: Path) -> None:
    """replays.py reads the SQLite saver's `checkpoints` and `writes` tables with SQL of its
    own: a thread's latest checkpoint id and its pending writes move as the saver writes."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from deepacp.session.replays import Replays

    home = tmp_path / "home"
    home.mkdir()
    replays = Replays(home)
    assert replays.key("t", ["/w"]) is None  # no database yet
    async with AsyncSqliteSaver.from_conn_string(str(home / "checkpoints.db")) as saver:
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        first = {"v": 1, "id": "1f0", "ts": "2026-01-01T00:00:00+00:00", "channel_values": {}}
        first |= {"channel_versions": {}, "versions_seen": {}}
        saved = await saver.aput(config, first, {"source": "input", "step": 0}, {})
        one = replays.key("t", ["/w"])
        await saver.aput_writes(saved, [("messages", "hello")], "task-1")
        two = replays.key("t", ["/w"])
    assert one is not None and two is not None
    assert one["checkpoint"] == "1f0+0" and two["checkpoint"] == "1f0+1"
    columns = {
        table: {row[1] for row in sqlite3.connect(home / "checkpoints.db").execute(
            f"PRAGMA table_info({table})"
        )}
        for table in ("checkpoints", "writes")
    }  # fmt: skip
    assert {"thread_id", "checkpoint_ns", "checkpoint_id"} <= columns["checkpoints"]
    assert {"thread_id", "checkpoint_ns", "checkpoint_id"} <= columns["writes"]
