"""Slash commands: the built-in ones and one per skill."""

from __future__ import annotations

import re
from collections.abc import Iterable

from deepacp.events import Command
from deepacp.harness.skills import Skill
from deepacp.session.approvals import MODE_IDS

COMPACT, MEMORY, SKILLS, CLEAR, MODE = "compact", "memory", "skills", "clear", "mode"

BUILTIN = (
    Command(COMPACT, "Summarize the conversation now to free context"),
    Command(MEMORY, "Show the AGENTS.md memory files in use and where to edit them"),
    Command(SKILLS, "List the available skills"),
    Command(CLEAR, "Start a fresh conversation in this session"),
    Command(MODE, f"Switch mode ({', '.join(MODE_IDS)})", hint="mode"),
)
_COMMAND = re.compile(r"/([a-z0-9][a-z0-9-]*)(?:\s+(.*))?\Z", re.DOTALL)


def available_commands(skills: Iterable[Skill]) -> tuple[Command, ...]:
    builtin = {c.name for c in BUILTIN}
    per_skill = [
        Command(
            s.name, f"Use the {s.name} skill: {s.description}"[:300], hint="what to apply it to"
        )
        for s in skills
        if s.name not in builtin
    ]
    return (*BUILTIN, *per_skill)


def parse_command(text: str, known: Iterable[str]) -> tuple[str, str] | None:
    """(name, argument text) when `text` invokes a known command; None for anything else
    (a message that merely starts with a path such as /etc/hosts is not a command)."""
    match = _COMMAND.match(text.strip())
    if match is None or match.group(1) not in set(known):
        return None
    return match.group(1), (match.group(2) or "").strip()


def skill_prompt(skill: Skill, body: str, request: str) -> str:
    """The message a /<skill> command sends: the skill's instructions, then the request."""
    task = request or "Apply this skill to the current work."
    return f'<skill name="{skill.name}" path="{skill.path}">\n{body.strip()}\n</skill>\n\n{task}'
