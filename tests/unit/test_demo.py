"""The demo's client: what it prints stands in for an editor's agent panel."""

from __future__ import annotations

from acp import schema as S

from deepacp.demo import DemoClient


async def test_a_permission_request_without_a_title_names_the_card(capsys) -> None:
    client = DemoClient(interactive=False)
    card = S.ToolCallStart(
        session_update="tool_call", tool_call_id="c1", title="Edit stats.py", kind="edit"
    )
    await client.session_update("s", card)
    answer = await client.request_permission("s", S.ToolCallUpdate(tool_call_id="c1"), [])
    assert answer.outcome.option_id == "allow_once"
    assert "permission asked for `Edit stats.py`" in capsys.readouterr().out
