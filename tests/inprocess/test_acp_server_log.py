"""The server log, as a user reads it when the editor says the agent failed: failures
recorded, secrets redacted."""

from __future__ import annotations

import pytest
from acp import RequestError

from tests.e2e.test_doctor import CANARY


async def test_server_log_file_records_failures_with_secrets_redacted(agent_factory) -> None:
    turns = [{"error": f"401 invalid x-api-key {CANARY}", "error_type": "auth"}]
    async with agent_factory(turns, env={"ANTHROPIC_API_KEY": CANARY}) as agent:
        session = await agent.new_session()
        with pytest.raises(RequestError) as info:
            await agent.prompt(session, "hello")
        wire_error = str(info.value.data or info.value)
        assert "401 invalid x-api-key [redacted]" in wire_error and CANARY not in wire_error
    log = (agent.home / "logs" / "deepacp.log").read_text()
    assert "turn failed" in log and "[redacted]" in log
    assert CANARY not in log
