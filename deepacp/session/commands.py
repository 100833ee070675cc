"""Slash commands: the built-in ones (a table of handlers) and one per skill."""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from deepacp.backends.protocol import Backend
from deepacp.events import Command, Question
from deepacp.harness.skills import Skill, SkillIndex, discover_skills
from deepacp.session.modes import MODE_IDS, parse_mode
from deepacp.session.usage import cost_report
from deepacp.session.workspace import MEMORY_SOURCES, SKILL_SOURCES

if TYPE_CHECKING:
    from deepacp.session.runtime import Session

COMPACT, MEMORY, SKILLS, CLEAR, MODE, COST = "compact", "memory", "skills", "clear", "mode", "cost"
GOAL = "goal"
GOAL_CHARS = 4_000
UNDO, REWIND, FORK = "undo", "rewind", "fork"
FORCE, KEEP = "--force", "--keep"
RESTORE_ANYWAY, KEEP_MINE, CANCEL = "Restore anyway", "Keep mine", "Cancel"
CHOICES = 10
"""`/rewind` offers the last this many prompts to pick from (it lists them all)."""

BUILTIN = (
    Command(COMPACT, "Summarize the conversation now to free context"),
    Command(MEMORY, "Show the AGENTS.md memory files in use and where to edit them"),
    Command(SKILLS, "List the available skills"),
    Command(CLEAR, "Start a fresh conversation in this session"),
    Command(MODE, f"Switch mode ({', '.join(MODE_IDS)})", hint="mode"),
    Command(COST, "Show the tokens this conversation used, by kind, and their cost"),
    Command(
        GOAL,
        "Set what done looks like: a grader checks the work before each turn ends "
        "(/goal alone shows it, /goal clear removes it)",
        hint="what done looks like",
    ),
    Command(UNDO, "Take back the last turn: its file changes and its messages"),
    Command(
        REWIND,
        "List the prompts, or go back to before prompt N (files and conversation)",
        hint="N [--force | --keep]",
    ),
    Command(FORK, "Copy this session (conversation and restore points) into a new one"),
)
_COMMAND = re.compile(r"/([a-z0-9][a-z0-9-]*)(?:\s+(.*))?\Z", re.DOTALL)


async def skills_of(backend: Backend) -> SkillIndex:
    return await discover_skills(backend, SKILL_SOURCES)


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


async def _compact(session: Session, argument: str) -> str:
    if await session.compact():
        return "Compacted: older messages are now a summary."
    return "Nothing to compact yet."


async def _memory(session: Session, argument: str) -> str:
    lines = ["Memory files (AGENTS.md) in use — edit them to change what the agent remembers:"]
    for path in MEMORY_SOURCES:
        try:
            await session.backend.read_text(path)
            state = "loaded"
        except Exception:
            state = "not created yet"
        lines.append(f"- {path} ({session.backend.disk_path(path)}): {state}")
    return "\n".join(lines)


async def _skills(session: Session, argument: str) -> str:
    index = await skills_of(session.backend)
    lines = [f"- /{s.name}: {s.description}" for s in index.skills.values()] or ["(none)"]
    lines += [f"- warning: {w}" for w in index.warnings]
    return "Skills:\n" + "\n".join(lines)


async def _clear(session: Session, argument: str) -> str:
    await session.clear()
    return "Started a fresh conversation."


async def _mode(session: Session, argument: str) -> str:
    try:
        mode = parse_mode(argument)
    except ValueError as exc:
        return f"{str(exc).capitalize()}."
    await session.set_mode(mode)
    return f"Mode: {mode}."


async def _cost(session: Session, argument: str) -> str:
    return cost_report(await session.usage(), session.record.model or "", session.prices())


async def _goal(session: Session, argument: str) -> str:
    rounds = session.goal_rounds()
    if not argument:
        if session.record.goal is None:
            return "No goal set. `/goal <what done looks like>` sets one."
        return (
            f"Goal: {session.record.goal}\n(checked before each turn ends, {rounds} rounds at most)"
        )
    if argument == "clear":
        session.set_goal(None)
        return "Goal cleared."
    if len(argument) > GOAL_CHARS:
        return f"That goal is {len(argument):,} characters; keep it under {GOAL_CHARS:,}."
    session.set_goal(argument)
    return (
        f"Goal set: {argument}\nBefore each turn ends, a grader checks the work against it "
        f"and sends it back for revision when it falls short ({rounds} rounds at most)."
    )


async def _undo(session: Session, argument: str) -> str:
    count = len(session.prompts())
    if count == 0:
        return "Nothing to undo yet."
    return await _rewind(session, f"{count} {argument}")


async def _ask(session: Session, question: str, choices: list[str]) -> str | None:
    """One of `choices` through the face's choice UI; None when not picked (or not asked)."""
    answer = await session.handler.ask(
        Question(f"{REWIND}-{uuid.uuid4().hex}", question, tuple(choices))
    )
    return answer if answer in choices else None


async def _rewind(session: Session, argument: str) -> str:
    prompts = session.prompts()
    words = argument.split()
    if not words:
        if not prompts:
            return "No prompts to rewind to yet."
        labels = [f"{n}. {p.prompt or '(no text)'}" for n, p in enumerate(prompts, start=1)]
        picked = await _ask(
            session,
            "Rewind to before which prompt? Its changes and later ones are undone.",
            labels[-CHOICES:],
        )
        if picked is None:
            return "Prompts (/rewind N goes back to before prompt N):\n" + "\n".join(labels)
        return await _rewind_to(session, labels.index(picked) + 1, set())
    flags = {w for w in words if w.startswith("--")}
    numbers = [w for w in words if not w.startswith("--")]
    if flags - {FORCE, KEEP} or len(numbers) != 1 or not numbers[0].isdigit():
        return "Usage: /rewind N [--force | --keep] (/rewind alone lists the prompts)."
    number = int(numbers[0])
    if not 1 <= number <= len(prompts):
        return f"There is no prompt {number}; /rewind lists the {len(prompts)} there are."
    return await _rewind_to(session, number, flags)


async def _rewind_to(session: Session, number: int, flags: set[str]) -> str:
    prompt = session.prompts()[number - 1].prompt
    done = await session.rewind(number, force=FORCE in flags, keep=KEEP in flags)
    if done.conflicts and not (flags & {FORCE, KEEP}):
        files = ", ".join(done.conflicts)
        answer = await _ask(
            session,
            f"You changed these files after the agent did: {files}. Rewind them too?",
            [RESTORE_ANYWAY, KEEP_MINE, CANCEL],
        )
        if answer not in (RESTORE_ANYWAY, KEEP_MINE):
            return (
                f"Not rewound: you changed these files after the agent did: {files}. "
                f"/rewind {number} --force restores them anyway; "
                f"/rewind {number} --keep rewinds the rest and keeps your versions."
            )
        done = await session.rewind(
            number, force=answer == RESTORE_ANYWAY, keep=answer == KEEP_MINE
        )
    lines = [f"Rewound to before prompt {number}: {prompt}"]
    if done.fork is not None:
        lines.append(f'The turns taken back are kept in the session "{done.fork.title}".')
    if done.restored:
        lines.append(f"Restored: {', '.join(done.restored)}.")
    if done.conflicts:
        lines.append(f"Kept your versions of: {', '.join(done.conflicts)}.")
    if done.failed:
        lines.append(f"Could not restore: {', '.join(done.failed)}.")
    if done.lost:
        lines.append(
            "Not kept (too large, holding a secret, over the storage budget, or gone from git),"
            f" left as they are: {', '.join(done.lost)}."
        )
    return "\n".join(lines)


async def _fork(session: Session, argument: str) -> str:
    forked = await session.fork()
    return (
        f'Forked into "{forked.title}": it holds this conversation so far and goes its own '
        "way from here; open it from the session list. This session carries on."
    )


HANDLERS: dict[str, Callable[[Session, str], Awaitable[str]]] = {
    COMPACT: _compact,
    MEMORY: _memory,
    SKILLS: _skills,
    CLEAR: _clear,
    MODE: _mode,
    COST: _cost,
    GOAL: _goal,
    UNDO: _undo,
    REWIND: _rewind,
    FORK: _fork,
}
"""The built-in commands: each answers with the text the user sees."""
