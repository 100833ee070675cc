"""Every folder deepacp makes under `$DEEPACP_HOME` is 0700 — `rewind/`, `cache/`,
`scratch/<id>/...` as much as the home itself — and one an older version left 0755 is
tightened; after a session with a turn, a command, a rewind and a load nothing in the
home is open to others."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.support.acp import write_script

TURN = [
    {
        "tool_calls": [
            {"id": "w", "name": "write_file", "args": {"file_path": "a.txt", "content": "a\n"}},
            {"id": "x", "name": "execute", "args": {"command": "echo made > b.txt"}},
        ]
    },
    {"content": "done"},
]


def loose(home: Path) -> list[str]:
    """Everything under `home` (itself too) that others can read or enter."""
    found = []
    for path in [home, *home.rglob("*")]:
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
            found.append(f"{path.relative_to(home)} {stat.S_IMODE(info.st_mode):o}")
    return found


async def test_every_folder_in_the_home_is_private(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    for old in ("rewind", "rewind/sessions", "cache", "cache/replays", "scratch"):
        (home / old).mkdir(parents=True)  # as an older version left them
        (home / old).chmod(0o755)
    async with agent_factory(TURN, home=home) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "make files")
        await agent.prompt(session, "/undo")
        assert not (agent.workspace / "b.txt").exists()
    write_script(agent.script, [{"content": "again"}])
    async with agent_factory([{"content": "again"}], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        await agent.prompt(session, "more")
    assert (home / "rewind" / "blobs").is_dir() and (home / "cache").is_dir()
    assert loose(home) == [], "\n".join(loose(home))
