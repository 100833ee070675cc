"""Slash commands: the built-in ones, and one per skill (the parts add their own)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deepacp.backends.protocol import Backend
from deepacp.events import Command
from deepacp.harness import Skill, SkillIndex, discover_skills, text_of
from deepacp.session.modes import MODE_IDS, Mode, parse_mode
from deepacp.session.parts.base import CommandHandler, Part
from deepacp.session.turns.usage import cost_report, prices_of
from deepacp.session.workspace import MEMORY_SOURCES, SKILL_SOURCES

if TYPE_CHECKING:
    from deepacp.session.context import SessionContext

COMPACT, MEMORY, SKILLS, CLEAR, MODE, COST = "compact", "memory", "skills", "clear", "mode", "cost"

BUILTIN = (
    Command(COMPACT, "Summarize the conversation now to free context"),
    Command(MEMORY, "Show the AGENTS.md memory files in use and where to edit them"),
    Command(SKILLS, "List the available skills"),
    Command(CLEAR, "Start a fresh conversation in this session"),
    Command(MODE, f"Switch mode ({', '.join(MODE_IDS)})", hint="mode"),
    Command(COST, "Show the tokens this conversation used, by kind, and their cost"),
)
_COMMAND = re.compile(r"/([a-z0-9][a-z0-9-]*)(?:\s+(.*))?\Z", re.DOTALL)


async def skills_of(backend: Backend) -> SkillIndex:
    return await discover_skills(backend, SKILL_SOURCES)


def with_skills(commands: Iterable[Command], index: SkillIndex) -> tuple[Command, ...]:
    """`commands`, then one per skill whose name no command has."""
    taken = {c.name for c in commands}
    per_skill = [
        Command(
            s.name, f"Use the {s.name} skill: {s.description}"[:300], hint="what to apply it to"
        )
        for s in index.skills.values()
        if s.name not in taken
    ]
    return (*commands, *per_skill)


def parse_command(text: str, known: Iterable[str]) -> tuple[str, str] | None:
    """(name, argument text) when `text` invokes a known command; None for anything else
    (a message that merely starts with a path such as /etc/hosts is not a command)."""
    match = _COMMAND.match(text.strip())
    if match is None or match.group(1) not in set(known):
        return None
    return match.group(1), (match.group(2) or "").strip()


@dataclass(frozen=True)
class Answered:
    """A built-in or a part's command ran: what it says."""

    text: str


async def route(
    content: str | list[dict], commands: dict[str, tuple[Command, CommandHandler]], backend: Backend
) -> Answered | str | list[dict]:
    """Run the command `content` names, if it names one of `commands`; else what the
    model is to get: the message as it is, or a skill's instructions and the request."""
    text = content if isinstance(content, str) else text_of(content[:1])
    skills = await skills_of(backend)
    parsed = parse_command(text, [*commands, *skills.skills])
    if parsed is None:
        return content
    name, argument = parsed
    if name in commands:
        return Answered(await commands[name][1](argument))
    skill = skills.skills[name]
    body = await backend.read_text(skill.path)
    rest = content[1:] if isinstance(content, list) else []
    return [{"type": "text", "text": skill_prompt(skill, body, argument)}, *rest]


def skill_prompt(skill: Skill, body: str, request: str) -> str:
    """The message a /<skill> command sends: the skill's instructions, then the request."""
    task = request or "Apply this skill to the current work."
    return f'<skill name="{skill.name}" path="{skill.path}">\n{body.strip()}\n</skill>\n\n{task}'


def names_command(content: str | list[dict], known: Iterable[str]) -> bool:
    """Whether the user's message is one of the `known` slash commands."""
    text = content if isinstance(content, str) else text_of(content[:1])
    return parse_command(text, known) is not None


def table(
    ctx: SessionContext, set_mode: Callable[[Mode], Awaitable[None]], parts: Iterable[Part]
) -> dict[str, tuple[Command, CommandHandler]]:
    """A session's commands by name: the built-in ones, then the parts'."""
    found = builtins(ctx, set_mode)
    for part in parts:
        found += part.commands()
    return {command.name: (command, handler) for command, handler in found}


def builtins(
    ctx: SessionContext, set_mode: Callable[[Mode], Awaitable[None]]
) -> list[tuple[Command, CommandHandler]]:
    """The built-in commands of a session (`set_mode`: the session's), each answering with
    the text the user sees."""

    async def compact(argument: str) -> str:
        if await ctx.host.compact(await ctx.graph(), ctx.config, ctx.handler.emit):
            return "Compacted: older messages are now a summary."
        return "Nothing to compact yet."

    async def memory(argument: str) -> str:
        lines = ["Memory files (AGENTS.md) in use — edit them to change what the agent remembers:"]
        for path in MEMORY_SOURCES:
            try:
                await ctx.backend.read_text(path)
                state = "loaded"
            except Exception:
                state = "not created yet"
            lines.append(f"- {path} ({ctx.backend.disk_path(path)}): {state}")
        return "\n".join(lines)

    async def skills(argument: str) -> str:
        index = await skills_of(ctx.backend)
        lines = [f"- /{s.name}: {s.description}" for s in index.skills.values()] or ["(none)"]
        lines += [f"- warning: {w}" for w in index.warnings]
        return "Skills:\n" + "\n".join(lines)

    async def clear(argument: str) -> str:
        await ctx.clear()
        return "Started a fresh conversation."

    async def mode(argument: str) -> str:
        try:
            chosen = parse_mode(argument)
        except ValueError as exc:
            return f"{str(exc).capitalize()}."
        await set_mode(chosen)
        return f"Mode: {chosen}."

    async def cost(argument: str) -> str:
        from deepacp.harness import USAGE_KEY, TokenUsage

        used = TokenUsage.from_json(await ctx.host.value(ctx.config, USAGE_KEY))
        model = ctx.record.model or ""
        return cost_report(used, model, prices_of(ctx.records.home, model))

    handlers = (compact, memory, skills, clear, mode, cost)
    return list(zip(BUILTIN, handlers, strict=True))
