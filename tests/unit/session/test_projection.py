from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deepacp.backends import FilesystemBackend
from deepacp.events import (
    MessageChunk,
    PlanUpdated,
    ThoughtChunk,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from deepacp.session.projection import LiveProjection, describe_call, replay, stop_reason


def test_titles_kinds_and_locations(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    kind, title, locations = describe_call(
        "read_file", {"file_path": "src/a.py", "offset": 9}, backend
    )
    assert (kind, title) == ("read", "Read src/a.py")
    assert locations[0].path == str(tmp_path / "src" / "a.py") and locations[0].line == 10
    assert describe_call("execute", {"command": "pytest -x"}, backend)[1] == "pytest -x"
    assert describe_call("grep", {"pattern": "TODO"}, backend)[:2] == (
        "search",
        "Search 'TODO' in .",
    )
    assert describe_call("mcp_tool", {}, backend)[0] == "other"
    # A hostile path still gets a card, just no location.
    assert describe_call("read_file", {"file_path": "../etc"}, backend)[2] == []


def test_replay_and_live_share_one_projection(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    call = {"id": "c1", "name": "write_file", "args": {"file_path": "a.txt", "content": "x"}}
    todos = {
        "id": "c2",
        "name": "write_todos",
        "args": {"todos": [{"content": "do it", "status": "pending"}]},
    }
    ai = AIMessage(
        "writing", tool_calls=[call, todos], additional_kwargs={"reasoning_content": "hmm"}
    )
    artifact = {
        "path": "a.txt",
        "abs_path": str(tmp_path / "a.txt"),
        "old_text": None,
        "new_text": "x",
    }
    result = ToolMessage("Created a.txt", tool_call_id="c1", artifact=artifact)
    replayed = list(replay([HumanMessage("please"), ai, result], backend))
    assert [type(e) for e in replayed] == [
        UserMessage,
        ThoughtChunk,
        MessageChunk,
        ToolStarted,
        ToolStarted,
        PlanUpdated,
        ToolFinished,
    ]
    finished = replayed[-1]
    assert finished.diff.path == str(tmp_path / "a.txt") and finished.diff.old_text is None

    live = LiveProjection(backend, window=None)
    announced = live.feed((), "updates", {"model": {"messages": [ai]}})
    assert announced == replayed[3:6]  # the same cards and plan
    finished_live = live.feed((), "updates", {"tools": {"messages": [result]}})
    assert finished_live == [finished]
    # LangGraph re-reports finished results when a run resumes: reported once only.
    assert live.feed((), "updates", {"tools": {"messages": [result]}}) == []
    assert live.feed(("tools:abc",), "updates", {"model": {"messages": [ai]}}) == []


def test_stop_reasons() -> None:
    assert (
        stop_reason(AIMessage("x", response_metadata={"finish_reason": "length"})) == "max_tokens"
    )
    assert (
        stop_reason(AIMessage("x", response_metadata={"stop_reason": "max_tokens"})) == "max_tokens"
    )
    assert stop_reason(AIMessage("x", response_metadata={"stop_reason": "refusal"})) == "refusal"
    assert stop_reason(AIMessage("x", response_metadata={"finish_reason": "stop"})) == "end_turn"
    assert stop_reason(None) == "end_turn"
