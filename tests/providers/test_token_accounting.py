"""Token accounting against what the provider reported: the prompt response's usage, the
`usage_update`s, `/cost` and its prices, through the real clients and the wire servers."""

from __future__ import annotations

import pytest
from acp import schema as S
from langgraph.checkpoint.memory import InMemorySaver

from deepacp.backends import LocalShellBackend
from deepacp.harness import SubAgent, create_deep_agent
from deepacp.harness.usage import TokenUsage
from tests.providers.wire import Reply, ToolCall

PRICES = """\
[prices."anthropic:claude-sonnet-4-5"]
currency = "EUR"
input = 3.0
output = 15.0
cache_read = 0.3
cache_write = 3.75
"""


def reported(usages) -> TokenUsage:
    """The sum of what the Anthropic server reported, in our terms."""
    total = TokenUsage()
    for u in usages:
        read, written = u["cache_read_input_tokens"], u["cache_creation_input_tokens"]
        total = total + TokenUsage(
            input=u["input_tokens"] + read + written,
            cache_read=read,
            cache_write=written,
            output=u["output_tokens"],
            calls=1,
        )
    return total


def priced(usage: TokenUsage) -> float:
    return (
        usage.uncached * 3.0 + usage.cache_read * 0.3 + usage.cache_write * 3.75
    ) / 1e6 + usage.output * 15.0 / 1e6


@pytest.fixture
def stdio(anthropic_server, tmp_path):
    """Start `deepacp --stdio` on ChatAnthropic pointed at the wire server."""
    from tests.support.acp import start_agent

    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    env = {
        "DEEPACP_MODEL": "anthropic:claude-sonnet-4-5",
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": anthropic_server.base_url,
    }

    def start():
        return start_agent(tmp_path, [], home=home, workspace=workspace, env=env)

    start.home = home
    return start


def cost_text(agent, session) -> str:
    return agent.client.text(session).rsplit("Tokens in this conversation", 1)[-1]


async def test_the_prompt_response_usage_is_the_sum_of_what_the_provider_reported(
    anthropic_server, stdio
):
    (stdio.home / "config.toml").write_text(PRICES)
    anthropic_server.add(
        Reply(text="Reading.", tool_calls=[ToolCall("read_file", {"file_path": "app.py"})]),
        Reply(text="It returns 1."),
    )
    async with stdio() as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "What does main return?")
        usage = response.field_meta["deepacp"]["usage"]
        server = reported(anthropic_server.usages())
        assert server.cache_write > 0 and server.cache_read > 0  # both kinds are in play
        assert usage == {
            "inputTokens": server.input,
            "outputTokens": server.output,
            "totalTokens": server.input + server.output,
            "thoughtTokens": 0,
            "cachedReadTokens": server.cache_read,
            "cachedWriteTokens": server.cache_write,
        }
        updates = agent.client.of(S.UsageUpdate, session)
        per_call = [reported([u]) for u in anthropic_server.usages()]
        assert [u.used for u in updates] == [c.total for c in per_call]
        assert all(u.size == 200_000 for u in updates)  # Claude's window, from its profile
        assert updates[-1].cost.currency == "EUR"
        assert updates[-1].cost.amount == pytest.approx(priced(server))
        assert updates[0].cost.amount == pytest.approx(priced(per_call[0]))


async def test_cost_shows_the_totals_by_kind_and_survives_a_reload(anthropic_server, stdio):
    (stdio.home / "config.toml").write_text(PRICES)
    anthropic_server.add(Reply(text="One."), Reply(text="Two."))
    async with stdio() as agent:
        session = await agent.new_session()
        await agent.prompt(session, "first")
        await agent.prompt(session, "second")
        await agent.prompt(session, "/cost")
        shown = cost_text(agent, session)
    server = reported(anthropic_server.usages())
    assert f"({server.calls} model calls)" in shown
    assert f"input: {server.input:,} (uncached {server.uncached:,}, " in shown
    assert f"cache write {server.cache_write:,}, cache read {server.cache_read:,})" in shown
    assert f"output: {server.output:,} (reasoning 0)" in shown
    assert f"Cost: {priced(server):.4f} EUR at the prices in config.toml." in shown
    assert len(anthropic_server.model_requests()) == 2  # /cost asks no model
    async with stdio() as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        agent.client.updates.clear()
        await agent.prompt(session, "/cost")
        assert cost_text(agent, session) == shown


async def test_cost_without_prices_shows_tokens_and_says_how_to_price_them(anthropic_server, stdio):
    anthropic_server.add(Reply(text="One."))
    async with stdio() as agent:
        session = await agent.new_session()
        await agent.prompt(session, "first")
        await agent.prompt(session, "/cost")
        shown = cost_text(agent, session)
        assert "(1 model call)" in shown
        assert 'no prices for anthropic:claude-sonnet-4-5 in config.toml (add a [prices."' in shown
        assert all(u.cost is None for u in agent.client.of(S.UsageUpdate, session))


async def test_a_sub_agents_calls_count_in_the_threads_usage(anthropic_server, claude, tmp_path):
    anthropic_server.add(
        Reply(
            text="Delegating.",
            tool_calls=[
                ToolCall("task", {"description": "Say hi.", "subagent_type": "general-purpose"})
            ],
        ),
        Reply(text="hi"),  # the sub-agent
        Reply(text="The sub-agent said hi."),
    )
    agent = create_deep_agent(
        claude(),
        backend=LocalShellBackend(root_dir=str(tmp_path)),
        subagents=[SubAgent("helper", "Helps.", "You help.")],
        checkpointer=InMemorySaver(),
    )
    result = await agent.ainvoke(
        {"messages": [{"role": "user", "content": "delegate"}]},
        {"configurable": {"thread_id": "t"}},
    )
    assert TokenUsage.from_json(result["usage"]) == reported(anthropic_server.usages())
    assert len(anthropic_server.usages()) == 3


async def test_openai_reasoning_and_cached_tokens_are_counted(openai_server, gpt, tmp_path):
    (tmp_path / "notes.md").write_text("notes\n" * 800)
    openai_server.add(
        Reply(
            thinking="I should read it.",
            tool_calls=[ToolCall("read_file", {"file_path": "notes.md"})],
        ),
        Reply(thinking="Now answer.", text="Notes, many times."),
    )
    agent = create_deep_agent(
        gpt(stream_usage=True),
        backend=LocalShellBackend(root_dir=str(tmp_path)),
        checkpointer=InMemorySaver(),
    )
    result = await agent.ainvoke(
        {"messages": [{"role": "user", "content": "What is in notes.md?"}]},
        {"configurable": {"thread_id": "t"}},
    )
    usages = [r.usage for r in openai_server.model_requests()]
    counted = TokenUsage.from_json(result["usage"])
    assert counted.input == sum(u["prompt_tokens"] for u in usages)
    assert counted.output == sum(u["completion_tokens"] for u in usages)
    assert counted.cache_read == sum(u["prompt_tokens_details"]["cached_tokens"] for u in usages)
    assert counted.reasoning == sum(
        u["completion_tokens_details"]["reasoning_tokens"] for u in usages
    )
    assert counted.cache_read > 0 and counted.reasoning > 0
