"""Prompt content blocks: what reaches the model, and clear errors for what the server
cannot take."""

from __future__ import annotations

import base64
import json

import pytest
from acp import RequestError
from acp import schema as S


async def test_prompt_blocks_reach_the_model_without_loss(agent_factory, model_requests) -> None:
    async with agent_factory([{"content": "seen"}]) as agent:
        (agent.workspace / "src").mkdir()
        (agent.workspace / "src" / "app.py").write_text("print('app')\n")
        session = await agent.new_session()
        uri = (agent.workspace / "src" / "app.py").as_uri()
        png = base64.b64encode(b"\x89PNG fake").decode()
        await agent.conn.prompt(
            session_id=session,
            prompt=[
                S.TextContentBlock(type="text", text="Look at "),
                S.ResourceContentBlock(type="resource_link", uri=uri, name="app.py"),
                S.EmbeddedResourceContentBlock(
                    type="resource",
                    resource=S.TextResourceContents(
                        uri="file:///notes/todo.md", text="- fix app\n"
                    ),
                ),
                S.ImageContentBlock(type="image", data=png, mime_type="image/png"),
            ],
        )
        human = model_requests()[0]["messages"][0]["content"]
        assert human.startswith("Look at ")
        assert f'uri="{uri}"' in human and 'path="src/app.py"' in human
        assert 'uri="file:///notes/todo.md"' in human and "- fix app" in human


async def test_unsupported_blocks_are_clear_errors(agent_factory) -> None:
    async with agent_factory([{"content": "x"}]) as agent:
        session = await agent.new_session()
        audio = S.AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav")
        with pytest.raises(RequestError) as info:
            await agent.conn.prompt(session_id=session, prompt=[audio])
        assert info.value.code == -32602 and "audio" in json.dumps(info.value.data)
        blob = S.EmbeddedResourceContentBlock(
            type="resource",
            resource=S.BlobResourceContents(
                uri="file:///x.zip", blob="AAAA", mime_type="application/zip"
            ),
        )
        with pytest.raises(RequestError) as info:
            await agent.conn.prompt(session_id=session, prompt=[blob])
        assert info.value.code == -32602
        assert (await agent.prompt(session, "still fine")).stop_reason == "end_turn"
