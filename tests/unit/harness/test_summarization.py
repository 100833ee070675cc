"""Non-destructive summarization: the state keeps everything, the view shrinks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deepacp import create_deep_agent
from deepacp.backends import StateBackend
from deepacp.harness.graph import with_scratch_routes
from deepacp.harness.middleware.summarization import (
    ContextTooLargeError,
    SummarizationMiddleware,
    clip_old_arguments,
    safe_cutoff,
)
from deepacp.testing import ScriptedChatModel

WINDOW = 3000  # tokens; trigger at 85% (2550), keep about 300


def is_summary_request(messages) -> bool:
    text = messages[-1].content if isinstance(messages[-1].content, str) else ""
    return text.startswith(("Summary so far", "Conversation to summarize"))


def conversation_model(replies: list[dict], record: Path | None = None) -> ScriptedChatModel:
    """Answers summary requests with a summary and everything else with the next reply."""
    replies = list(replies)

    def turn(messages):
        if is_summary_request(messages):
            return {"content": f"SUMMARY #{len(replies)}: the user asked questions about talking."}
        return replies.pop(0) if replies else {"content": "(out of replies)"}

    return ScriptedChatModel(
        turns=[turn] * 100,
        record=str(record) if record else None,
        profile={"max_input_tokens": WINDOW},
    )


def requests(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def talk(i: int) -> dict:
    return {"content": f"reply {i} " + "talk " * 120}


async def test_view_shrinks_state_stays_whole_and_history_is_readable(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    read_back = {
        "id": "h",
        "name": "read_file",
        "args": {"file_path": "/conversation_history/t1.md", "limit": 8},
    }
    replies = [talk(i) for i in range(6)] + [{"tool_calls": [read_back]}, {"content": "read it"}]
    agent = create_deep_agent(conversation_model(replies, record), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    for i in range(6):
        await agent.ainvoke({"messages": [HumanMessage(f"question {i} " + "word " * 120)]}, config)
    seen = requests(record)
    summaries = [
        i
        for i, r in enumerate(seen)
        if r["messages"][0]["content"].startswith("Conversation to summarize")
    ]
    assert summaries, "the thread was summarized"
    after = seen[summaries[0] + 1]["messages"]
    assert after[0]["content"].startswith("<conversation_summary>")
    assert (
        "SUMMARY #" in after[0]["content"] and "/conversation_history/t1.md" in after[0]["content"]
    )
    assert len(after) < len(seen[summaries[0] - 1]["messages"])  # the view shrank
    state = (await agent.aget_state(config)).values
    assert len(state["messages"]) == 12  # nothing was removed from the thread
    assert state["_summarization"]["cutoff"] > 0
    history = state["files"]["/conversation_history/t1.md"]["content"]
    assert "question 0" in history and "reply 0" in history
    # A later turn can read what was summarized away.
    await agent.ainvoke({"messages": [HumanMessage("what did I ask first?")]}, config)
    results = [
        m for m in (await agent.aget_state(config)).values["messages"] if isinstance(m, ToolMessage)
    ]
    assert "question 0" in results[-1].content


async def test_chained_summaries_move_the_cutoff_forward() -> None:
    agent = create_deep_agent(
        conversation_model([talk(i) for i in range(12)]), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    cutoffs = []
    for i in range(12):
        await agent.ainvoke({"messages": [HumanMessage(f"q{i} " + "word " * 120)]}, config)
        event = (await agent.aget_state(config)).values.get("_summarization")
        if event and (not cutoffs or cutoffs[-1] != event["cutoff"]):
            cutoffs.append(event["cutoff"])
    assert len(cutoffs) >= 2 and cutoffs == sorted(cutoffs)
    assert len((await agent.aget_state(config)).values["messages"]) == 24


async def test_overflow_error_summarizes_and_retries_once(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    turns = [
        {"content": "first answer " + "detail " * 400},
        {"error": "prompt is too long", "error_type": "context_overflow"},
        {"content": "summary of the first exchange"},
        {"content": "answer after recovery"},
    ]
    model = ScriptedChatModel(turns=turns, record=str(record))
    agent = create_deep_agent(model, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    await agent.ainvoke({"messages": [HumanMessage("one " + "context " * 400)]}, config)
    result = await agent.ainvoke({"messages": [HumanMessage("two")]}, config)
    assert result["messages"][-1].content == "answer after recovery"
    retry = requests(record)[-1]["messages"]
    assert retry[0]["content"].startswith("<conversation_summary>")
    assert retry[-1]["content"] == "two"


async def test_irreducible_input_is_a_clear_error() -> None:
    model = ScriptedChatModel(turns=[{"content": "never"}], profile={"max_input_tokens": 200})
    agent = create_deep_agent(model)
    with pytest.raises(ContextTooLargeError) as raised:
        await agent.ainvoke({"messages": [HumanMessage("word " * 2000)]})
    assert str(raised.value).startswith(
        "the model's context is smaller than deepacp's prompt (about "
    )
    assert str(raised.value).endswith(
        "tokens): raise the server's context size or use the compact profile"
    )


def test_clipping_old_write_arguments() -> None:
    big = "x" * 10_000
    old = AIMessage(
        "",
        tool_calls=[{"id": "w", "name": "write_file", "args": {"file_path": "a", "content": big}}],
    )
    view = [HumanMessage("hi"), old, ToolMessage("ok", tool_call_id="w"), HumanMessage("next")]
    clipped = clip_old_arguments(view, keep_from=3)
    assert len(clipped[1].tool_calls[0]["args"]["content"]) < 300
    assert clipped[1].tool_calls[0]["args"]["file_path"] == "a"
    assert old.tool_calls[0]["args"]["content"] == big  # the original is untouched


def test_cutoff_never_splits_a_call_from_its_results() -> None:
    call = AIMessage(
        "",
        tool_calls=[{"id": "a", "name": "ls", "args": {}}, {"id": "b", "name": "ls", "args": {}}],
    )
    messages = [
        HumanMessage("q " * 50),
        call,
        ToolMessage("r " * 50, tool_call_id="a"),
        ToolMessage("r " * 50, tool_call_id="b"),
        HumanMessage("last"),
    ]
    for keep in range(0, 400, 5):
        cutoff = safe_cutoff(messages, keep, 0)
        assert cutoff is None or not isinstance(messages[cutoff], ToolMessage)


async def test_compact_summarizes_now(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    model = ScriptedChatModel(
        record=str(record),
        turns=[{"content": "a"}, {"content": "b"}, {"content": "COMPACTED"}, {"content": "c"}],
    )
    summarizer = SummarizationMiddleware(with_scratch_routes(StateBackend()))
    agent = create_deep_agent(model, middleware=[summarizer], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    await agent.ainvoke({"messages": [HumanMessage("one")]}, config)
    await agent.ainvoke({"messages": [HumanMessage("two")]}, config)
    assert await summarizer.compact(agent, config, model) is True
    await agent.ainvoke({"messages": [HumanMessage("three")]}, config)
    last = requests(record)[-1]["messages"]
    assert "COMPACTED" in last[0]["content"]
    assert last[-1]["content"] == "three"


async def test_a_summary_is_reported_as_it_starts_and_ends_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deepacp.events import Compaction

    canary = "sk-canary-5b8e0c1d2a"
    monkeypatch.setenv("CANARY_API_KEY", canary)
    model = ScriptedChatModel(
        turns=[{"content": "a"}, {"content": "b"}, {"content": f"the key is {canary}"}]
    )
    summarizer = SummarizationMiddleware(with_scratch_routes(StateBackend()))
    agent = create_deep_agent(model, middleware=[summarizer], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    await agent.ainvoke({"messages": [HumanMessage("one")]}, config)
    await agent.ainvoke({"messages": [HumanMessage("two")]}, config)
    told: list[Compaction] = []

    async def report(compaction: Compaction) -> None:
        told.append(compaction)

    assert await summarizer.compact(agent, config, model, report) is True
    started, ended = told
    assert (started.status, ended.status) == ("in_progress", "completed")
    assert started.compaction_id == ended.compaction_id
    assert canary not in ended.summary and ended.summary.startswith("the key is ")
    kept = (await agent.aget_state(config)).values["_summarization"]
    assert kept["summary"] == ended.summary  # what the checkpoint keeps, too
