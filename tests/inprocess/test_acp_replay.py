"""A session loaded in a fresh process from its saved replay redraws exactly what a replay
read from the checkpoints does, byte for byte; a deleted or rewound conversation leaves
no saved replay behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ONE_TURN = [{"content": "Hello there."}]
WITH_DIFF = [
    {
        "reasoning": "write it, then fix it",
        "content": "Writing.",
        "tool_calls": [
            {"id": "w", "name": "write_file", "args": {"file_path": "a.py", "content": "x = 1\n"}}
        ],
    },
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "edit_file",
                "args": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
            }
        ]
    },
    {"content": "Fixed a.py."},
]
LONG = [
    *(
        {"content": f"step {i}", "tool_calls": [{"id": f"c{i}", "name": "ls", "args": {}}]}
        for i in range(124)
    ),
    {"content": "done"},
] * 2
"""Two prompts of 250 messages each (a prompt's steps stay under the recursion limit)."""


def saved_replay(home: Path, session: str) -> Path:
    return home / "cache" / "replays" / f"{session}.json"


async def load_lines(agent, session: str) -> list[str]:
    """What the server sent while it loaded `session`, each message as its JSON text."""
    since = len(agent.wire.incoming)
    await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
    return [json.dumps(m) for m in agent.wire.incoming[since:] if "method" in m]


@pytest.mark.parametrize(
    ("turns", "prompts"),
    [
        (ONE_TURN, 1),
        (WITH_DIFF, 1),
        pytest.param(
            LONG, 2, marks=pytest.mark.slow(reason="a 500-message session, saved and loaded")
        ),
    ],
    ids=["one turn", "tool call with diff", "500 messages"],
)
async def test_a_saved_replay_redraws_the_session_byte_for_byte(
    agent_factory, tmp_path, turns, prompts
) -> None:
    home = tmp_path / "home"
    async with agent_factory(turns, home=home) as agent:
        session = await agent.new_session()
        for _ in range(prompts):
            await agent.prompt(session, "go")
    saved = saved_replay(home, session)
    assert saved.is_file()  # saved when the session closed
    saved.unlink()

    async with agent_factory([], home=home) as agent:
        from_checkpoints = await load_lines(agent, session)
    assert saved.is_file()  # saved by that load
    first = saved.stat()

    async with agent_factory([], home=home) as agent:
        from_saved = await load_lines(agent, session)
    again = saved.stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)  # read, kept

    assert len(from_checkpoints) > 2
    assert from_saved == from_checkpoints
    if turns is WITH_DIFF:
        assert any('"type": "diff"' in line for line in from_saved)


async def test_a_deleted_session_leaves_no_saved_replay(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    async with agent_factory(ONE_TURN, home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "hello")
    assert saved_replay(home, session).is_file()
    async with agent_factory([], home=home) as agent:
        await agent.raw_request("session/delete", {"sessionId": session})
    assert not saved_replay(home, session).exists()
