"""A turn's token usage goes in the prompt response's own `usage` field for a client that
reads the unstable ACP 1.25 schema (the only one where `PromptResponse` has it), and in
`_meta.deepacp.usage` for any other."""

from __future__ import annotations

import pytest
from acp import schema as S

from tests.support import acp_schema

TURNS = [{"reasoning": "a short thought", "content": "Done."}]
UNSTABLE_CLIENT = S.ClientCapabilities(plan=S.PlanCapabilities())


def prompt_result(agent) -> dict:
    [message] = [m for m in agent.wire.incoming if "stopReason" in m.get("result", {})]
    return message


@pytest.mark.parametrize("unstable", [True, False], ids=["unstable client", "stable client"])
async def test_turn_usage_is_where_the_clients_schema_has_it(agent_factory, unstable) -> None:
    acp_schema.require()
    capabilities = UNSTABLE_CLIENT if unstable else S.ClientCapabilities()
    async with agent_factory(TURNS, capabilities=capabilities) as agent:
        agent.wire.unstable = unstable  # every message checked against that client's schema
        session = await agent.new_session()
        response = await agent.prompt(session, "go")
        message = prompt_result(agent)
    result, meta = message["result"], message["result"]["_meta"]["deepacp"]
    assert meta["messageId"]  # the prompt's id stays in _meta either way
    usage = result.get("usage") if unstable else meta.get("usage")
    assert usage is not None, result
    assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    if unstable:
        assert "usage" not in meta
        assert response.usage is not None and response.usage.total_tokens == usage["totalTokens"]
        acp_schema.check(message, method="session/prompt", unstable=True)
    else:
        assert "usage" not in result
