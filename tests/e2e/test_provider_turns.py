"""A deliberately broken harness, run as its own `deepacp --stdio`, refused by the validating
server."""

from __future__ import annotations

import sys

import pytest
from acp.exceptions import RequestError

from tests.inprocess.test_provider_turns import BROKEN_HARNESS
from tests.providers.wire import Reply, ToolCall
from tests.support.providers import MODELS, provider_agent


async def test_a_broken_harness_is_refused_by_the_validating_server(tmp_path, anthropic_server):
    anthropic_server.add(
        Reply(thinking="Read it first.", tool_calls=[ToolCall("read_file", {"file_path": "a.py"})]),
        Reply(text="never sent"),
    )
    command = (sys.executable, "-c", BROKEN_HARNESS)
    async with provider_agent(
        tmp_path, "anthropic", anthropic_server, model=MODELS["anthropic"], command=command
    ) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        await agent.conn.set_config_option(config_id="effort", session_id=session, value="low")
        with pytest.raises(RequestError) as raised:
            await agent.prompt(session, "read a.py")
    assert "a final `assistant` message must start with a thinking block" in str(raised.value)
    first, second = anthropic_server.model_requests()
    assert first.status == 200 and second.status == 400
    assert len(anthropic_server.script) == 1  # the refused request used no reply
