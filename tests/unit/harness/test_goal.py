"""The goal grader's pieces: reading its verdict, and the bounded transcript it sees."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deepacp.harness.middleware.goal import (
    ARGUMENT_CHARS,
    TRANSCRIPT_CHARS,
    TRANSCRIPT_MESSAGE_CHARS,
    TRANSCRIPT_MESSAGES,
    Verdict,
    VerdictError,
    feedback_message,
    parse_verdict,
    rounds_done,
    transcript_view,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdict": "satisfied", "feedback": "ok"}', Verdict("satisfied", "ok")),
        (
            'I ran the tests.\n```json\n{"verdict": "needs_revision", "feedback": "fix b"}\n```',
            Verdict("needs_revision", "fix b"),
        ),
        ('{"verdict": "Needs Revision", "feedback": "x"}', Verdict("needs_revision", "x")),
        ('{"verdict": "failed"}', Verdict("failed", "")),
        (  # the last verdict counts; other JSON (a quoted config) does not
            '{"verdict": "failed"} then {"a": 1} and finally {"verdict": "satisfied"}',
            Verdict("satisfied", ""),
        ),
        (
            '{"verdict": "needs_revision", "feedback": ["a", "b"]}',
            Verdict("needs_revision", '["a", "b"]'),
        ),
    ],
)
def test_a_verdict_is_read_from_the_grader_answer(text: str, expected: Verdict) -> None:
    assert parse_verdict(text) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("It looks good to me!", "not a verdict: 'It looks good to me!'"),
        ('{"feedback": "no verdict key"}', "not a verdict"),
        ('{"verdict": "maybe"}', "unknown verdict 'maybe'"),
        ('{"verdict": "satisfied"', "not a verdict"),
        ("", "not a verdict"),
    ],
)
def test_an_answer_without_a_verdict_is_an_error_saying_so(text: str, says: str) -> None:
    with pytest.raises(VerdictError, match="verdict") as raised:
        parse_verdict(text)
    assert says in str(raised.value)


def test_the_transcript_keeps_the_last_messages_each_clipped() -> None:
    messages = [HumanMessage(f"message {i} " + "x" * 5000) for i in range(100)]
    view = transcript_view(messages)
    assert view.startswith(f"({100 - TRANSCRIPT_MESSAGES} earlier messages left out)")
    assert "message 69 " not in view and "message 70 " in view and "message 99 " in view
    assert "x" * TRANSCRIPT_MESSAGE_CHARS not in view  # each message cut (its label included)
    assert len(view) <= TRANSCRIPT_CHARS + 100


def test_the_transcript_clips_tool_call_arguments_and_results() -> None:
    huge = "y" * 50_000
    call = {"id": "c1", "name": "write_file", "args": {"file_path": "a.py", "content": huge}}
    messages = [
        HumanMessage("write it"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(huge, tool_call_id="c1", name="write_file"),
    ]
    view = transcript_view(messages)
    assert "write it" in view and "a.py" in view
    assert "y" * (ARGUMENT_CHARS + 1) not in view.split("## tool result")[0]
    assert len(view) < TRANSCRIPT_MESSAGE_CHARS + 2 * ARGUMENT_CHARS + 500


def test_the_whole_view_is_bounded_however_long_the_calls() -> None:
    calls = [{"id": f"c{i}", "name": "grep", "args": {"pattern": "z" * 999}} for i in range(50)]
    messages = [AIMessage("", tool_calls=calls) for _ in range(TRANSCRIPT_MESSAGES)]
    view = transcript_view(messages)
    assert len(view) <= TRANSCRIPT_CHARS + 100
    assert view.startswith("… [earlier part clipped]")


def test_rounds_count_the_feedback_since_the_user_spoke() -> None:
    feedback = feedback_message("goal", "more", 1, 3)
    assert rounds_done([HumanMessage("go"), AIMessage("done")]) == 0
    earlier = [HumanMessage("go"), feedback, AIMessage("done")]
    assert rounds_done([*earlier, feedback, AIMessage("again")]) == 2
    assert rounds_done([*earlier, HumanMessage("next")]) == 0  # a new turn starts afresh


async def test_the_python_api_takes_a_goal() -> None:
    from deepacp import create_deep_agent
    from deepacp.testing import ScriptedChatModel

    model = ScriptedChatModel(
        turns=[
            {"content": "Draft."},
            {"content": '{"verdict": "needs_revision", "feedback": "say final"}'},
            {"content": "Final."},
            {"content": '{"verdict": "satisfied"}'},
        ]
    )
    agent = create_deep_agent(model, goal="the answer says final", goal_rounds=2)
    state = await agent.ainvoke({"messages": [HumanMessage("answer")]})
    texts = [m.content for m in state["messages"]]
    assert texts[0] == "answer" and texts[1] == "Draft." and texts[-1] == "Final."
    assert "say final" in texts[2] and rounds_done(state["messages"]) == 1
    assert model.calls == 4


async def test_a_grader_that_fails_ends_the_turn_saying_so() -> None:
    from deepacp import create_deep_agent
    from deepacp.harness.contracts import GoalSignal
    from deepacp.testing import ScriptedChatModel

    model = ScriptedChatModel(
        turns=[{"content": "Done."}, {"error": "invalid key", "error_type": "auth"}]
    )
    agent = create_deep_agent(model, goal="it works")
    signals = [
        data
        async for mode, data in agent.astream(
            {"messages": [HumanMessage("go")]}, stream_mode=["custom", "values"]
        )
        if mode == "custom" and isinstance(data, GoalSignal)
    ]
    assert [s.status for s in signals] == ["checking", "failed"]
    assert "the grader stopped with an error" in signals[-1].text
    assert "invalid key" in signals[-1].text
