import json
from pathlib import Path

import pytest
from langchain_core.exceptions import ContextOverflowError, ModelAPIError
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage

from deepacp.errors import ScriptError
from deepacp.testing import EXHAUSTED, ScriptedChatModel


def write(tmp_path: Path, data) -> Path:
    path = tmp_path / "script.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


async def test_streams_thoughts_text_and_split_tool_calls(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(
        write(
            tmp_path,
            {
                "turns": [
                    {
                        "reasoning": "let me think about it",
                        "content": "Reading the file now.",
                        "tool_calls": [
                            {"id": "c1", "name": "read_file", "args": {"file_path": "a.py"}}
                        ],
                    }
                ]
            },
        )
    )
    bound = model.bind_tools([])
    chunks = [c async for c in bound.astream([HumanMessage("go")])]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    text_chunks = [c.content for c in chunks if c.content]
    assert len(text_chunks) > 1 and "".join(text_chunks) == "Reading the file now."
    thoughts = "".join(c.additional_kwargs.get("reasoning_content", "") for c in chunks)
    assert thoughts == "let me think about it"
    arg_pieces = [tc["args"] for c in chunks for tc in c.tool_call_chunks]
    assert len(arg_pieces) == 2 and json.loads("".join(arg_pieces)) == {"file_path": "a.py"}
    whole = chunks[0]
    for c in chunks[1:]:
        whole = whole + c
    assert whole.tool_calls == [
        {"name": "read_file", "args": {"file_path": "a.py"}, "id": "c1", "type": "tool_call"}
    ]
    assert whole.usage_metadata["output_tokens"] > 0
    assert whole.content_blocks[0] == {"type": "reasoning", "reasoning": "let me think about it"}


async def test_exhausted_script_answers_plainly() -> None:
    model = ScriptedChatModel(turns=[{"content": "one"}])
    assert (await model.ainvoke("a")).content == "one"
    again = await model.ainvoke("b")
    assert again.content == EXHAUSTED and again.tool_calls == []


async def test_callable_turns_see_the_messages() -> None:
    model = ScriptedChatModel(turns=[lambda messages: {"content": f"got {len(messages)}"}])
    assert (await model.ainvoke([HumanMessage("x"), HumanMessage("y")])).content == "got 2"


async def test_record_logs_every_request(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    model = ScriptedChatModel(record=str(record), turns=[{"content": "a"}, {"content": "b"}])
    await model.ainvoke([SystemMessage("be brief"), HumanMessage("hi")])
    bound = model.bind_tools([{"type": "function", "function": {"name": "ls", "parameters": {}}}])
    await bound.ainvoke([HumanMessage("again")])
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0] == {
        "system": "be brief",
        "messages": [{"type": "human", "content": "hi"}],
        "tools": [],
    }
    assert lines[1]["tools"] == ["ls"]


async def test_error_turn_raises_like_a_provider_outage() -> None:
    model = ScriptedChatModel(turns=[{"error": "service unavailable"}])
    with pytest.raises(ModelAPIError, match="service unavailable"):
        await model.ainvoke("x")
    overflow = ScriptedChatModel(turns=[{"error": "too long", "error_type": "context_overflow"}])
    with pytest.raises(ContextOverflowError):
        await overflow.ainvoke("x")


async def test_a_request_over_the_window_overflows_without_using_a_turn() -> None:
    model = ScriptedChatModel(turns=[{"content": "fits"}], profile={"max_input_tokens": 50})
    with pytest.raises(ContextOverflowError):
        await model.ainvoke("word " * 400)
    assert (await model.ainvoke("short")).content == "fits"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"turns": [{"contnet": "typo"}]}, "turns.0.contnet"),
        ({"turns": [{"tool_calls": [{"args": {}}]}]}, "turns.0.tool_calls.0.name"),
        ({"turns": "nope"}, "turns"),
    ],
)
def test_bad_script_is_a_clear_error(tmp_path: Path, content, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(ScriptError, match=message) as info:
        ScriptedChatModel.from_file(path)
    assert str(path) in str(info.value)


def test_missing_script_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"cannot read script .*nope\.json"):
        ScriptedChatModel.from_file(tmp_path / "nope.json")


def test_context_window_becomes_the_profile(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(write(tmp_path, {"context_window": 1234, "turns": []}))
    assert model.profile["max_input_tokens"] == 1234


async def test_a_turn_with_when_goes_to_the_request_that_names_it() -> None:
    model = ScriptedChatModel(
        turns=[
            {"content": "child one", "when": "BRIEF-7"},
            {"content": "parent one"},
            {"content": "child two", "when": "BRIEF-7"},
            {"content": "parent two"},
        ]
    )
    parent = [HumanMessage("hello")]
    child = [SystemMessage("You are a sub-agent"), HumanMessage("do BRIEF-7 now")]
    assert (await model.ainvoke(parent)).content == "parent one"
    assert (await model.ainvoke(parent)).content == "parent two"
    assert (await model.ainvoke(child)).content == "child one"
    assert (await model.ainvoke(parent)).content == EXHAUSTED  # never a tagged turn
    assert (await model.ainvoke(child)).content == "child two"
    assert (await model.ainvoke(child)).content == EXHAUSTED
    assert model.calls == 6


async def test_when_in_a_script_file_and_the_old_order_without_it(tmp_path: Path) -> None:
    turns = [{"content": "a"}, {"content": "b", "when": "task X"}, {"content": "c"}]
    model = ScriptedChatModel.from_file(write(tmp_path, {"turns": turns}))
    assert (await model.ainvoke("first")).content == "a"
    assert (await model.ainvoke("second")).content == "c"
    assert (await model.ainvoke("the task X brief")).content == "b"
    plain = ScriptedChatModel(turns=[{"content": "1"}, {"content": "2"}])
    assert [(await plain.ainvoke("x")).content for _ in range(3)] == ["1", "2", EXHAUSTED]
