"""Prompt caching through the whole harness: the real ChatAnthropic / ChatOpenAI against the
wire servers, whose cache accounting follows the providers' documented rules."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepacp.backends import LocalShellBackend
from deepacp.harness import create_deep_agent
from tests.providers.wire import Reply, ToolCall

EPHEMERAL = {"type": "ephemeral", "ttl": "5m"}


def wire(value) -> str:
    """A request part as the server received it, key order kept (its bytes, modulo spacing)."""
    return json.dumps(value, ensure_ascii=False)


def total_input(usage) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    return 1\n")
    (root / "AGENTS.md").write_text("Use tabs.\n")
    return root


def agent_on(model, workspace):
    return create_deep_agent(
        model,
        backend=LocalShellBackend(root_dir=str(workspace)),
        memory=["AGENTS.md"],
        planning=True,
        checkpointer=InMemorySaver(),
    )


async def ask(agent, text, thread="t1"):
    config = {"configurable": {"thread_id": thread}}
    await agent.ainvoke({"messages": [{"role": "user", "content": text}]}, config)


def a_read_and_an_edit():
    return [
        Reply(text="Reading.", tool_calls=[ToolCall("read_file", {"file_path": "app.py"})]),
        Reply(
            text="Editing.",
            tool_calls=[
                ToolCall(
                    "edit_file",
                    {"file_path": "app.py", "old_string": "return 1", "new_string": "return 2"},
                )
            ],
        ),
        Reply(text="Done: main returns 2."),
    ]


async def test_breakpoints_sit_on_the_tools_the_stable_system_prompt_and_the_latest_turn(
    anthropic_server, claude, workspace
):
    anthropic_server.add(Reply(text="Hello."))
    await ask(agent_on(claude(), workspace), "hi")
    body = anthropic_server.model_requests()[0].body
    assert [t.get("cache_control") for t in body["tools"]][-1] == EPHEMERAL
    assert all("cache_control" not in t for t in body["tools"][:-1])
    *stable, memory = body["system"]
    assert stable[-1]["cache_control"] == EPHEMERAL  # the base prompt and the todo rules
    assert "write_todos" in stable[-1]["text"]
    assert "<agent_memory>" in memory["text"] and "cache_control" not in memory
    assert body["cache_control"] == EPHEMERAL  # the latest turn: automatic caching


async def two_turns(anthropic_server, claude, workspace) -> None:
    """A turn that reads and edits a file (three calls), then a turn of one reply."""
    anthropic_server.add(*a_read_and_an_edit(), Reply(text="Second turn."))
    agent = agent_on(claude(), workspace)
    await ask(agent, "Make main return 2.")
    await ask(agent, "Thanks. Anything else?")


async def test_each_call_reads_the_previous_calls_prefix_from_cache(
    anthropic_server, claude, workspace
):
    await two_turns(anthropic_server, claude, workspace)
    usages = anthropic_server.usages()
    assert len(usages) == 4
    assert usages[0]["cache_read_input_tokens"] == 0
    assert usages[0]["cache_creation_input_tokens"] > 1024  # tools + system + first message
    for before, after in pairwise(usages):
        assert after["cache_read_input_tokens"] == total_input(before)
        assert after["cache_creation_input_tokens"] < 0.2 * total_input(after)


async def test_the_prefix_is_byte_stable_across_calls_and_turns(
    anthropic_server, claude, workspace
):
    await two_turns(anthropic_server, claude, workspace)
    bodies = [r.body for r in anthropic_server.model_requests()]
    for before, after in pairwise(bodies):
        assert wire(after["tools"]) == wire(before["tools"])
        assert wire(after["system"]) == wire(before["system"])
        sent = before["messages"]
        assert wire(after["messages"][: len(sent)]) == wire(sent)


async def test_a_memory_change_keeps_the_tools_and_system_prefix_cached(
    anthropic_server, claude, workspace
):
    anthropic_server.add(Reply(text="One."), Reply(text="Two."))
    agent = agent_on(claude(), workspace)
    await ask(agent, "first")
    (workspace / "AGENTS.md").write_text("Use spaces, four of them.\n")
    await ask(agent, "second")
    first, second = anthropic_server.model_requests()
    assert "four of them" in second.body["system"][-1]["text"]
    assert wire(second.body["system"][:-1]) == wire(first.body["system"][:-1])
    read = second.usage["cache_read_input_tokens"]
    assert 1024 < read < total_input(first.usage)  # the stable prefix, not the old memory


async def test_a_new_thread_reuses_the_tools_and_system_prefix(anthropic_server, claude, workspace):
    anthropic_server.add(Reply(text="One."), Reply(text="Two."))
    agent = agent_on(claude(), workspace)
    await ask(agent, "first", thread="a")
    await ask(agent, "another conversation", thread="b")
    assert anthropic_server.usages()[1]["cache_read_input_tokens"] > 1024


async def test_openai_requests_carry_one_prompt_cache_key_per_thread(openai_server, gpt, workspace):
    openai_server.add(*a_read_and_an_edit(), Reply(text="Other thread."))
    agent = agent_on(gpt(stream_usage=True), workspace)
    await ask(agent, "Make main return 2.", thread="thread-one")
    await ask(agent, "hello", thread="thread-two")
    keys = [r.body.get("prompt_cache_key") for r in openai_server.model_requests()]
    assert keys == ["deepacp-thread-one"] * 3 + ["deepacp-thread-two"]
    assert all(r.status == 200 for r in openai_server.model_requests())
    cached = [
        u["prompt_tokens_details"]["cached_tokens"]
        for u in (r.usage for r in openai_server.model_requests())
    ]
    assert cached[0] == 0 and all(c > 0 for c in cached[1:3])


async def test_the_prefix_survives_a_session_load_in_a_new_process(anthropic_server, tmp_path):
    from tests.support.acp import start_agent

    env = {
        "DEEPACP_MODEL": "anthropic:claude-sonnet-4-5",
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": anthropic_server.base_url,
    }
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    anthropic_server.add(
        Reply(text="Reading.", tool_calls=[ToolCall("read_file", {"file_path": "app.py"})]),
        Reply(text="It returns 1."),
        Reply(text="Still 1."),
    )
    async with start_agent(tmp_path, [], home=home, workspace=workspace, env=env) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "What does main return?")
    async with start_agent(tmp_path, [], home=home, workspace=workspace, env=env) as agent:
        await agent.conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
        await agent.prompt(session, "And now?")
    _, before, after = anthropic_server.model_requests()
    assert after.status == 200
    assert wire(after.body["tools"]) == wire(before.body["tools"])
    assert wire(after.body["system"]) == wire(before.body["system"])
    sent = before.body["messages"]
    assert wire(after.body["messages"][: len(sent)]) == wire(sent)
    assert after.usage["cache_read_input_tokens"] == total_input(before.usage)
