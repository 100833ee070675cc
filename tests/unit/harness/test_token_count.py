"""The summarizer's remembered token count gives the full count's answer for every view of
a growing thread: messages appended, a summary put in front, messages replaced."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from deepacp.backends import StateBackend
from deepacp.harness.middleware.summarization import SummaryEvent, TokenCount, render, tokens
from deepacp.harness.tools import filesystem_tools

TEXT = st.text(max_size=300)
CONTENT = st.one_of(
    TEXT,
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, TEXT),
            st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
            st.builds(lambda t: {"type": "reasoning", "reasoning": t}, TEXT),
        ),
        max_size=3,
    ),
)


def message(kind: int, content, n: int):
    if kind == 0:
        return HumanMessage(content)
    if kind == 1:
        call = {"id": f"c{n}", "name": "write_file", "args": {"file_path": "a", "content": "x" * n}}
        return AIMessage(content if isinstance(content, str) else "", tool_calls=[call])
    if kind == 2:
        return ToolMessage(content, tool_call_id=f"c{n}", name="ls")
    return AIMessage(content)


STEP = st.tuples(st.integers(0, 5), CONTENT)  # kinds 4 and 5: summarize, replace the last


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=40), with_system=st.booleans())
def test_the_remembered_count_is_the_full_count(steps, with_system) -> None:
    count = TokenCount()
    system = SystemMessage("You are a coding agent.") if with_system else None
    tools = filesystem_tools(StateBackend())
    thread: list = []
    event: SummaryEvent | None = None
    for n, (kind, content) in enumerate(steps):
        if kind == 4 and thread:
            event = SummaryEvent(cutoff=len(thread) // 2, summary=f"summary {n}", file_path="h")
        elif kind == 5 and thread:
            thread[-1] = message(n % 4, content, n)  # same place, a new message
        else:
            thread.append(message(kind % 4, content, n))
        view = render(thread, event)
        assert count(view, system, tools) == tokens(view, system, tools)
        assert count(view, system, []) == tokens(view, system, [])
