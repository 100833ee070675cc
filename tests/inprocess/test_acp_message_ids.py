"""Every user, agent and thought chunk carries its message's `messageId` (ACP 1.25): the
chunks of one message share it, another message has another, and `session/load` replays
each message under the id it was shown with live — from the quick-load transcript, the
saved replay and the checkpoints alike. A user message's id is its prompt's, the one
`_session/rewind` and `_session/edit_prompt` take."""

from __future__ import annotations

import json
from pathlib import Path

CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
TURNS = [
    {
        "reasoning": "first I look around the workspace",
        "content": "Looking around the workspace.",
        "tool_calls": [{"id": "l1", "name": "ls", "args": {}}],
    },
    {"reasoning": "then I answer the first prompt", "content": "The first prompt is done."},
    {
        "reasoning": "a second thought for the second prompt",
        "content": "The second prompt is done too.",
        "message_id": "msg_provider_2",  # a provider's id, on the first chunk only
    },
]


def messages(wire: list[dict]) -> tuple[list[tuple[str, str, str]], int]:
    """The messages chunks make, (kind, id, text), and how many chunks made them; every
    chunk has an id, and an id is never taken up again by a later message."""
    folded: list[tuple[str, str, str]] = []
    chunks = 0
    for message in wire:
        update = message.get("params", {}).get("update", {})
        if message.get("method") != "session/update" or update["sessionUpdate"] not in CHUNKS:
            continue
        chunks += 1
        kind, ident, text = update["sessionUpdate"], update.get("messageId"), ""
        assert isinstance(ident, str) and ident, f"a chunk without a messageId: {update}"
        text = update["content"]["text"]
        if folded and folded[-1][:2] == (kind, ident):
            folded[-1] = (kind, ident, folded[-1][2] + text)
        else:
            assert ident not in {m[1] for m in folded}, f"{ident} names two messages"
            folded.append((kind, ident, text))
    return folded, chunks


async def loaded(agent_factory, home: Path, session: str) -> list[tuple[str, str, str]]:
    """What a fresh process sends as an editor restores `session` (loaded right away)."""
    async with agent_factory([], home=home, load=session) as agent:
        return messages(agent.wire.incoming)[0]


async def test_message_ids_are_shared_by_a_message_and_kept_on_load(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    async with agent_factory(TURNS, home=home) as agent:
        session = await agent.new_session()
        first = await agent.prompt(session, "first prompt")
        second = await agent.prompt(session, "second prompt")
        live, chunks = messages(agent.wire.incoming)
    prompts = [r.field_meta["deepacp"]["messageId"] for r in (first, second)]

    assert [kind for kind, _, _ in live] == ["agent_thought_chunk", "agent_message_chunk"] * 3
    assert chunks > len(live)  # the messages streamed in pieces, under one id each
    assert [text for _, _, text in live][-2:] == [TURNS[2]["reasoning"], TURNS[2]["content"]]
    assert [ident for _, ident, _ in live][-2:] == ["msg_provider_2-thought", "msg_provider_2"]

    quick = await loaded(agent_factory, home, session)
    replays = home / "cache" / "replays"
    (replays / f"{session}.load.json").unlink()
    saved = await loaded(agent_factory, home, session)
    assert (replays / f"{session}.json").is_file()  # that load read the saved replay
    for path in replays.glob(f"{session}*"):
        path.unlink()
    async with agent_factory([], home=home, load=session) as agent:
        from_checkpoints = messages(agent.wire.incoming)[0]
        users = [m for m in from_checkpoints if m[0] == "user_message_chunk"]
        assert [(ident, text) for _, ident, text in users] == list(
            zip(prompts, ["first prompt", "second prompt"], strict=True)
        )
        # the user chunk's id addresses its prompt: back to just after the first one
        params = {"sessionId": session, "toMessageId": users[0][1]}
        assert (await agent.raw_request("_session/rewind", params))["lastMessageId"] == prompts[0]
    assert quick == saved == from_checkpoints, json.dumps([quick, saved, from_checkpoints])
    assert [m for m in from_checkpoints if m[0] != "user_message_chunk"] == live
    after_rewind = await loaded(agent_factory, home, session)
    assert [ident for _, ident, _ in after_rewind] == [ident for _, ident, _ in quick[:5]]
