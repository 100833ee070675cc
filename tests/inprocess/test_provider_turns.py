"""Whole turns on the real provider clients: `deepacp --stdio` with ChatAnthropic,
ChatOpenAI and ChatOllama pointed at local servers that validate every request the way
the provider does. Thinking, a streamed tool call, an approval, its result, a second model
call, a cancel in the middle of a stream, and `session/load` replay in a new process
after which the thread still makes valid requests. One test breaks the harness on purpose
and shows the validating server refusing what it then sends."""

from __future__ import annotations

import asyncio

import pytest
from acp import schema as S

from tests.providers.wire import Reply, ToolCall
from tests.support.providers import provider_agent
from tests.support.waits import wait_for

# Per provider: the model, the effort to pick, and whether its thinking reaches the editor
# (Chat Completions does not stream reasoning text, only counts it).
CASES = {
    "anthropic": ("anthropic:claude-sonnet-4-5", "medium", True),
    "openai": ("openai:gpt-5.4", "high", False),
    "ollama": ("ollama:qwen3", "high", True),
}


def sent_effort(provider: str, body: dict) -> object:
    """What the request asked of the provider for reasoning."""
    if provider == "anthropic":
        return body.get("thinking")
    if provider == "openai":
        return body.get("reasoning_effort")
    return body.get("think")


EXPECTED_EFFORT = {
    "anthropic": {"type": "enabled", "budget_tokens": 8192},
    "openai": "high",
    "ollama": True,
}


def server_for(provider, anthropic_server, openai_server, ollama_server):
    return {"anthropic": anthropic_server, "openai": openai_server, "ollama": ollama_server}[
        provider
    ]


@pytest.mark.parametrize("provider", list(CASES))
async def test_a_whole_session_on_the_real_client(
    tmp_path, provider, anthropic_server, openai_server, ollama_server
):
    server = server_for(provider, anthropic_server, openai_server, ollama_server)
    model, effort, thoughts_shown = CASES[provider]
    write = ToolCall("write_file", {"file_path": "notes.md", "content": "# Notes\n"})
    server.add(
        Reply(
            thinking="The user wants a notes file; write it.",
            redacted_thinking=provider == "anthropic",  # opaque, and must go back as it came
            text="Writing.",
            tool_calls=[write],
        ),
        Reply(thinking="It is written.", text="Done: notes.md exists."),
        Reply(text="a long answer that goes on " * 40, chunk=4, delay=0.02),
        Reply(
            thinking="Read it back.", tool_calls=[ToolCall("read_file", {"file_path": "notes.md"})]
        ),
        Reply(text="It says Notes."),
    )
    home = tmp_path / "home"
    async with provider_agent(tmp_path, provider, server, model=model, home=home) as agent:
        session = await agent.new_session()
        picked = await agent.conn.set_config_option(
            config_id="effort", session_id=session, value=effort
        )
        thinking = next(o for o in picked.config_options if o.id == "effort")
        assert thinking.category == "thought_level" and thinking.current_value == effort

        assert (await agent.prompt(session, "make notes.md")).stop_reason == "end_turn"
        (request,) = agent.client.permission_requests  # ask mode: the write asks first
        assert request.tool_call.kind == "edit"
        assert (agent.workspace / "notes.md").read_text() == "# Notes\n"
        assert agent.client.text() == "Writing.Done: notes.md exists."
        thought = "".join(u.content.text for u in agent.client.of(S.AgentThoughtChunk))
        if thoughts_shown:
            assert thought == "The user wants a notes file; write it.It is written."
        (card,) = agent.client.cards().values()
        assert card["statuses"][-1] == "completed"
        first, second = server.model_requests()
        assert sent_effort(provider, first.body) == EXPECTED_EFFORT[provider]
        assert second.status == 200  # the tool result and the thinking went back as required
        if provider == "anthropic":
            kinds = [b["type"] for b in second.body["messages"][1]["content"]]
            assert kinds == ["thinking", "redacted_thinking", "text", "tool_use"]

        streaming = asyncio.create_task(agent.prompt(session, "tell me a story"))
        before = len(agent.client.of(S.AgentMessageChunk))
        await wait_for(lambda: len(agent.client.of(S.AgentMessageChunk)) >= before + 3)
        await agent.conn.cancel(session_id=session)
        assert (await streaming).stop_reason == "cancelled"
        shown = agent.client.text()

    async with provider_agent(tmp_path, provider, server, model=model, home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        users = [u.content.text for u in agent.client.of(S.UserMessageChunk)]
        assert users == ["make notes.md", "tell me a story"]
        assert agent.client.text().startswith("Writing.Done: notes.md exists.")
        assert len(agent.client.text()) <= len(shown)
        replayed = "".join(u.content.text for u in agent.client.of(S.AgentThoughtChunk))
        assert replayed == thought
        assert [c["statuses"][-1] for c in agent.client.cards().values()] == ["completed"]

        assert (await agent.prompt(session, "what does it say?")).stop_reason == "end_turn"
        assert agent.client.text().endswith("It says Notes.")
    statuses = [r.status for r in server.model_requests()]
    assert statuses == [200] * 5, [r.error for r in server.model_requests()]


BROKEN_HARNESS = """
import sys
from langchain_core.messages import AIMessage
from deepacp.harness.middleware import thinking

def forgetful(self, request):  # loses every thinking block, as a careless harness would
    def strip(m):
        if isinstance(m, AIMessage) and isinstance(m.content, list):
            kept = [b for b in m.content if b.get("type") not in ("thinking", "redacted_thinking")]
            return m.model_copy(update={"content": kept})
        return m
    return request.override(messages=[strip(m) for m in request.messages])

thinking.ThoughtOnlyRepliesMiddleware._view = forgetful
from deepacp.cli import main
sys.exit(main(["--stdio"]))
"""
