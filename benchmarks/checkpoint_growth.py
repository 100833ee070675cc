"""Checkpoint bytes of one thread as it grows: deepacp's delta-stored messages against
LangGraph's default messages channel.

    python benchmarks/checkpoint_growth.py

Prints the SQLite checkpoint size after 50, 100, 200 and 400 messages and the growth ratio
per doubling (target: <= 2.2, i.e. linear; a quadratic channel approaches 4).
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import tempfile
from pathlib import Path

import aiosqlite
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from deepacp import create_deep_agent
from deepacp.testing import ScriptedChatModel

MARKS = (50, 100, 200, 400)
TEXT = "a realistic paragraph of model output, " * 12  # ~500 characters per message


def db_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    return pages * size


async def grow(path: Path, build) -> list[int]:
    # Prompts alternate: question + answer (2 messages), and question + tool call + its
    # result + answer (4 messages), so every mark is reached exactly.
    model = ScriptedChatModel(turns=[])
    plan: list[int] = []
    for mark in MARKS:
        while (remaining := mark - sum(plan)) > 0:
            plan.append(4 if len(plan) % 3 == 0 and remaining >= 4 else 2)
    for i, size in enumerate(plan):
        if size == 4:
            call = {"id": f"c{i}", "name": "ls", "args": {"path": ""}}
            model.turns.append({"content": TEXT, "tool_calls": [call]})
        model.turns.append({"content": TEXT})
    sizes = []
    async with aiosqlite.connect(path) as conn:
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        agent = build(model, saver)
        config = {"configurable": {"thread_id": "bench"}}
        count = 0
        for i, size in enumerate(plan):
            await agent.ainvoke({"messages": [HumanMessage(f"question {i} {TEXT}")]}, config)
            count += size
            if count in MARKS:
                await conn.commit()
                sizes.append(db_bytes(path))
    return sizes


def deepacp_agent(model, saver):
    return create_deep_agent(model, checkpointer=saver)


def default_agent(model, saver):
    from langchain.tools import tool

    @tool
    def ls(path: str = "") -> str:
        """List files."""
        return "a.txt\nb.txt"

    return create_agent(model, [ls], checkpointer=saver)


def report(name: str, sizes: list[int]) -> None:
    print(name)
    for mark, size in zip(MARKS, sizes, strict=True):
        print(f"  {mark:>4} messages: {size / 1024:>9.0f} KiB")
    ratios = [b / a for a, b in itertools.pairwise(sizes)]
    print("  growth per doubling: " + ", ".join(f"{r:.2f}x" for r in ratios))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ours = await grow(Path(tmp) / "deepacp.db", deepacp_agent)
        theirs = await grow(Path(tmp) / "default.db", default_agent)
    report("deepacp (messages stored as deltas)", ours)
    report("LangGraph default messages channel (same conversation)", theirs)


if __name__ == "__main__":
    asyncio.run(main())
