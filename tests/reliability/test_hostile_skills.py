"""A repository's Agent Skills are text a stranger wrote: a SKILL.md built to break its
parser is one warning, and the session around it opens, lists the other skills and
answers."""

from __future__ import annotations

import acp.schema as S

from tests.support.waits import wait_for

# Frontmatter nested past the pure-Python YAML parser's stack: a RecursionError there.
NESTED = "---\nname: deep\ndescription: " + "[" * 5000 + "\n---\nbody\n"
FINE = "---\nname: triage\ndescription: Triage an issue.\n---\nsteps\n"


async def test_a_skill_built_to_break_the_parser_is_a_warning(
    agent_factory, model_requests
) -> None:
    async with agent_factory([{"content": "answered"}]) as agent:
        for name, text in (("deep", NESTED), ("triage", FINE)):
            folder = agent.workspace / ".deepacp" / "skills" / name
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(text)
        session = await agent.new_session()
        response = await agent.prompt(session, "hi")
        assert response.stop_reason == "end_turn"
        assert "answered" in agent.client.text(session)
        await wait_for(lambda: agent.client.of(S.AvailableCommandsUpdate, session))
        commands = agent.client.of(S.AvailableCommandsUpdate, session)[-1].available_commands
        assert "triage" in [c.name for c in commands]
        assert "deep" not in [c.name for c in commands]
        [request] = model_requests()  # the model is told, as of every skill that is broken
        assert ".deepacp/skills/deep/SKILL.md: frontmatter is not valid YAML" in request["system"]
