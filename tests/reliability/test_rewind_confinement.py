"""Rewind stays in the workspace: a hostile model (in `accept-edits`, where its edits and
sandboxed commands are not asked about) plants links and swaps folders during a turn, then
the user undoes the turn. Whatever the restore writes or reads goes through the file tools'
confinement: nothing outside the workspace is created, changed or copied in, a link or FIFO
where a file was is never followed, and the server keeps answering."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import schema as S

BEFORE = b"\x7fELF\x02\x01\x01\x00the user's own binary \xff\xfe\n"
"""Not UTF-8: restored as bytes, not through the text tools."""
SECRET = b"OUTSIDE-CANARY \xff not text\n"
BOUND = 60.0
"""A hang, not a slow machine: every step here takes a second or two."""


def tree(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under `root`: a file's bytes, a link's target, and the mode."""
    found: dict[str, tuple[bytes | str, int]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            content: bytes | str = str(path.readlink())
        elif path.is_file():
            content = path.read_bytes()
        else:
            content = "<dir>"
        found[path.relative_to(root).as_posix()] = (content, info.st_mode)
    return found


def hostile(command: str, *calls: dict) -> list[dict]:
    """One turn: the model runs `command` (then `calls`), and says it is done."""
    run = {"id": "x", "name": "execute", "args": {"command": command}}
    steps = [{"tool_calls": [run]}]
    if calls:
        steps.append({"tool_calls": list(calls)})
    return [*steps, {"content": "done"}]


async def undo_in_accept_edits(agent) -> str:
    session = await agent.new_session()
    await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
    await asyncio.wait_for(agent.prompt(session, "tidy up"), BOUND)
    await asyncio.wait_for(agent.prompt(session, "/undo"), BOUND)
    said = agent.client.of(S.AgentMessageChunk, session)[-1].content.text
    # The server still answers a request after the rewind.
    await asyncio.wait_for(agent.conn.list_sessions(), BOUND)
    return said


async def test_a_link_planted_beside_the_file_is_not_followed(agent_factory, tmp_path) -> None:
    outside = tmp_path / "outside"
    (outside / "bin").mkdir(parents=True)
    planted = f"printf more >> bin/git && ln -s {outside}/bin/git bin/git.rewind.tmp"
    async with agent_factory(hostile(planted)) as agent:
        tool = agent.workspace / "bin" / "git"
        tool.parent.mkdir()
        tool.write_bytes(BEFORE)
        tool.chmod(0o755)
        said = await undo_in_accept_edits(agent)
        assert tree(outside) == {"bin": ("<dir>", (outside / "bin").lstat().st_mode)}, said
        assert tool.read_bytes() == BEFORE and tool.stat().st_mode & 0o777 == 0o755
        assert not tool.is_symlink()


async def test_a_parent_swapped_for_a_link_is_not_followed(agent_factory, tmp_path) -> None:
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    swap = f"printf more >> lib/blob.bin && mv lib lib.old && ln -s {outside}/lib lib"
    async with agent_factory(hostile(swap)) as agent:
        (agent.workspace / "lib").mkdir()
        (agent.workspace / "lib" / "blob.bin").write_bytes(BEFORE)
        said = await undo_in_accept_edits(agent)
        assert list((outside / "lib").iterdir()) == [], said
        assert "Could not restore: lib/blob.bin" in said
        assert (agent.workspace / "lib").is_symlink()  # left as the model made it


async def test_a_link_to_a_file_outside_is_not_read(agent_factory, tmp_path) -> None:
    """Deleting a link to a file outside keeps nothing of what it leads to: neither the
    restore points nor the rewind copy that file into the home or the workspace."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.bin").write_bytes(SECRET)
    delete = {"id": "d", "name": "delete", "args": {"file_path": "peek.bin"}}
    link = f"ln -s {outside}/secret.bin peek.bin"
    async with agent_factory(hostile(link, delete)) as agent:
        said = await undo_in_accept_edits(agent)
        for path in [*agent.home.rglob("*"), *agent.workspace.rglob("*")]:
            if path.is_file() and not path.is_symlink():
                assert SECRET not in path.read_bytes(), f"{path} holds the outside file"
        assert (outside / "secret.bin").read_bytes() == SECRET, said


async def test_a_fifo_is_not_read(agent_factory, tmp_path) -> None:
    """Deleting a FIFO the model made does not block the server on reading it."""
    delete = {"id": "d", "name": "delete", "args": {"file_path": "pipe.bin"}}
    async with agent_factory(hostile("mkfifo pipe.bin", delete)) as agent:
        await undo_in_accept_edits(agent)
        assert not (agent.workspace / "pipe.bin").exists()
