"""/rewind, /undo, /fork and /goal as clients show them: the choice a client may pick for
the user does the least, every option names its prompt, the text reads as Markdown, and
the forks they leave have titles a list tells apart."""

from __future__ import annotations

import re

from acp import schema as S

LIST_ITEM = re.compile(r"^(- |\d+\. )")


def last_text(agent, session: str) -> str:
    return agent.client.of(S.AgentMessageChunk, session)[-1].content.text


def joined_lines(text: str) -> list[str]:
    """Lines a Markdown client would join into the line before them: a single newline that
    neither starts a paragraph nor a list item."""
    joined = []
    for paragraph in text.split("\n\n"):
        lines = paragraph.split("\n")
        joined += [line for line in lines[1:] if not LIST_ITEM.match(line)]
    return joined


async def titles(agent) -> list[str | None]:
    return [s.title for s in (await agent.conn.list_sessions()).sessions]


async def test_rewind_alone_offers_the_newest_prompt_first_each_option_named(
    agent_factory,
) -> None:
    turns = [{"content": "one"}, {"content": "two"}, {"content": "three"}]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        for prompt in ("first", "second", "third"):
            await agent.prompt(session, prompt)
        agent.client.answers = ["choice-0"]  # what acpx's --approve-all picks
        await agent.prompt(session, "/rewind")
        (which,) = agent.client.permission_requests
        names = [o.name for o in which.options]
        assert names == [
            "3. third (the last prompt)",
            "2. second (and the 1 after it)",
            "1. first (and the 2 after it)",
        ]
        assert "3. third" in (which.tool_call.title or "")  # what "Accept" alone would do
        assert last_text(agent, session).startswith("Rewound to before prompt 3: third")
        await agent.prompt(session, "/rewind 9")
        assert "the 2 there are" in last_text(agent, session)


async def test_command_output_reads_as_markdown_and_forks_have_distinct_titles(
    agent_factory,
) -> None:
    write = {"id": "w", "name": "write_file", "args": {"file_path": "a.txt", "content": "b\n"}}
    turns = [{"content": "one"}, {"tool_calls": [write]}, {"content": "two"}, {"content": "3"}]
    async with agent_factory(turns) as agent:
        (agent.workspace / "a.txt").write_text("a\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        said = []
        for prompt in ("first", "second", "/undo", "third", "/rewind 2", "/fork"):
            await agent.prompt(session, prompt)
            said.append(last_text(agent, session))
        assert "Restored: a.txt" in said[2] and (agent.workspace / "a.txt").read_text() == "a\n"
        for prompt in ("/goal tests pass", "/goal", "/rewind"):
            agent.client.answers = [None]  # /rewind alone dismissed: the prompts are listed
            await agent.prompt(session, prompt)
            said.append(last_text(agent, session))
        for text in said:
            assert joined_lines(text) == [], text
        listed = await titles(agent)
        forks = [t for t in listed if t and t.startswith("fork of")]
        assert len(forks) == 3 and len(set(forks)) == 3, listed


async def test_a_conflict_offers_what_keeps_your_work_first(agent_factory) -> None:
    write = {"id": "w", "name": "write_file", "args": {"file_path": "a.txt", "content": "b\n"}}
    async with agent_factory([{"tool_calls": [write]}, {"content": "wrote it"}]) as agent:
        (agent.workspace / "a.txt").write_text("a\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "write a")
        (agent.workspace / "a.txt").write_text("mine\n")
        agent.client.answers = ["choice-0", "choice-0"]  # a client that picks the first
        await agent.prompt(session, "/rewind")
        conflict = agent.client.permission_requests[-1]
        assert [o.name for o in conflict.options] == ["Keep mine", "Cancel", "Restore anyway"]
        assert (agent.workspace / "a.txt").read_text() == "mine\n"
        assert "Kept your versions of: a.txt" in last_text(agent, session)
