"""Checkpoint bytes of one thread as it grows: deepacp's delta-stored messages against
LangGraph's default messages channel.

    python benchmarks/checkpoint_growth.py
    python benchmarks/checkpoint_growth.py --postgres postgresql://user@host:5432/scratch

Prints the checkpoint size after 50, 100, 200 and 400 messages and the growth ratio per
doubling (target: <= 2.2, i.e. linear; a quadratic channel approaches 4). SQLite: the file's
size. PostgreSQL (langgraph-checkpoint-postgres, as `database = URL` uses it): the bytes of
the thread's rows in the saver's tables; its threads are deleted afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import sqlite3
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

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


Measure = Callable[[], Awaitable[int]]


@contextlib.asynccontextmanager
async def sqlite_saver(path: Path, thread_id: str) -> AsyncIterator[tuple[Any, Measure]]:
    async with aiosqlite.connect(path) as conn:
        saver = AsyncSqliteSaver(conn)
        await saver.setup()

        async def measure() -> int:
            await conn.commit()
            return db_bytes(path)

        yield saver, measure


@contextlib.asynccontextmanager
async def postgres_saver(url: str, thread_id: str) -> AsyncIterator[tuple[Any, Measure]]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        await saver.setup()

        async def measure() -> int:
            total = 0
            async with saver.conn.cursor() as cur:
                for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                    await cur.execute(
                        f"SELECT coalesce(sum(pg_column_size(t.*)), 0) AS size FROM {table} t "
                        "WHERE thread_id = %s",
                        (thread_id,),
                    )
                    total += int((await cur.fetchone())["size"])
            return total

        try:
            yield saver, measure
        finally:
            await saver.adelete_thread(thread_id)


async def grow(storage, build) -> list[int]:
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
    thread_id = f"bench-{uuid.uuid4().hex}"
    async with storage(thread_id) as (saver, measure):
        agent = build(model, saver)
        config = {"configurable": {"thread_id": thread_id}}
        count = 0
        for i, size in enumerate(plan):
            await agent.ainvoke({"messages": [HumanMessage(f"question {i} {TEXT}")]}, config)
            count += size
            if count in MARKS:
                sizes.append(await measure())
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


async def main(postgres: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:

        def storage(name: str):
            if postgres:
                return lambda thread_id: postgres_saver(postgres, thread_id)
            return lambda thread_id: sqlite_saver(Path(tmp) / f"{name}.db", thread_id)

        ours = await grow(storage("deepacp"), deepacp_agent)
        theirs = await grow(storage("default"), default_agent)
    where = "PostgreSQL" if postgres else "SQLite"
    report(f"deepacp (messages stored as deltas), {where}", ours)
    report(f"LangGraph default messages channel (same conversation), {where}", theirs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on this PostgreSQL database")
    asyncio.run(main(parser.parse_args().postgres))
