"""The messages channel's reducer: each write appends, replaces by id or removes, in
order, whatever the batches the writes are replayed in (a load replays many at once)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from deepacp.harness.state import append_messages

IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"]))
WRITE = st.one_of(
    st.builds(lambda text, id_: AIMessage(text, id=id_), st.text(max_size=3), IDS),
    st.sampled_from(["a", "b", "c", "d", REMOVE_ALL_MESSAGES]).map(
        lambda id_: RemoveMessage(id=id_)
    ),
)


def one_by_one(state: list[BaseMessage], writes: list[BaseMessage]) -> list[BaseMessage]:
    """What the writes mean, applied one at a time."""
    log = list(state)
    for write in writes:
        if isinstance(write, RemoveMessage):
            log = [] if write.id == REMOVE_ALL_MESSAGES else [m for m in log if m.id != write.id]
            continue
        ids = [m.id for m in log]
        if write.id is not None and write.id in ids:
            log[ids.index(write.id)] = write
        else:
            log.append(write)
    return log


@settings(max_examples=300, deadline=None)
@given(st.lists(WRITE, max_size=12), st.lists(WRITE, max_size=12))
def test_writes_replayed_in_any_batches_give_the_log_written_one_at_a_time(first, then) -> None:
    once = append_messages([], first + then)
    assert append_messages(append_messages([], first), then) == once
    assert once == one_by_one(one_by_one([], first), then)
