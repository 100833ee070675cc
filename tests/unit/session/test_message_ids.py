"""A streamed chunk is shown under the id its finished message keeps in the thread, as
LangChain merges it: the provider's id where one comes, else the run's."""

from __future__ import annotations

from deepacp.session.turns.message_ids import StreamIds

STEP_1, STEP_2 = {"langgraph_checkpoint_ns": "model:1"}, {"langgraph_checkpoint_ns": "model:2"}


def test_a_providers_id_on_the_first_chunk_names_the_whole_message() -> None:
    ids = StreamIds()
    assert ids.of("msg_abc", STEP_1) == "msg_abc"  # Anthropic's message_start
    assert ids.of("lc_run--r1", STEP_1) == "msg_abc"
    assert ids.of(None, STEP_1) == "msg_abc"


def test_the_run_id_until_a_providers_id_comes() -> None:
    ids = StreamIds()
    assert ids.of("lc_run--r1", STEP_1) == "lc_run--r1"
    assert ids.of("chatcmpl-9", STEP_1) == "chatcmpl-9"  # the merged message keeps it


def test_a_retried_call_and_the_next_step_are_other_messages() -> None:
    ids = StreamIds()
    assert ids.of("lc_run--r1", STEP_1) == "lc_run--r1"
    assert ids.of("lc_run--r2", STEP_1) == "lc_run--r2"  # the retry's message is kept
    assert ids.of("lc_run--r3", STEP_2) == "lc_run--r3"
    assert ids.of(None, {"langgraph_checkpoint_ns": "model:3"}) is None


def test_another_providers_id_is_another_message_even_without_step_metadata() -> None:
    ids = StreamIds()
    assert ids.of("msg_a", {}) == "msg_a"
    assert ids.of("lc_run--r1", {}) == "msg_a"
    assert ids.of("msg_b", {}) == "msg_b"
