"""GoalPart: what done looks like (`/goal`), kept in the session's record; while one is set
the harness grades the work against it before each turn ends."""

from __future__ import annotations

from collections.abc import Sequence

from deepacp.config import DEFAULT_GOAL_ROUNDS, load_config
from deepacp.errors import ConfigError
from deepacp.events import Command
from deepacp.session.assembly import Contributions
from deepacp.session.parts.base import CommandHandler, Part

GOAL = "goal"
GOAL_CHARS = 4_000
COMMAND = Command(
    GOAL,
    "Set what done looks like: a grader checks the work before each turn ends "
    "(/goal alone shows it, /goal clear removes it)",
    hint="what done looks like",
)


class GoalPart(Part):
    def commands(self) -> Sequence[tuple[Command, CommandHandler]]:
        return ((COMMAND, self._command),)

    def rounds(self) -> int:
        """How many gradings a turn gets at most (config.toml's, else the default)."""
        try:
            return load_config(self.ctx.records.home).goal_rounds
        except ConfigError:
            return DEFAULT_GOAL_ROUNDS

    async def contribute(self, parts: Contributions) -> None:
        if self.ctx.record.goal:
            parts.goal = lambda: self.ctx.record.goal
            parts.goal_rounds = self.rounds()

    def set(self, goal: str | None) -> None:
        """Set (or, with None, remove) what done looks like; checked from the next turn end.
        Without a goal the harness has no grader (the graph is rebuilt when that changes,
        with the same model: a scripted one keeps its place)."""
        if (goal is None) != (self.ctx.record.goal is None):
            self.ctx.rebuild(keep_model=True)
        self.ctx.update(goal=goal)

    async def _command(self, argument: str) -> str:
        rounds, goal = self.rounds(), self.ctx.record.goal
        if not argument:
            if goal is None:
                return "No goal set. `/goal <what done looks like>` sets one."
            return f"Goal: {goal}\n\n(checked before each turn ends, {rounds} rounds at most)"
        if argument == "clear":
            self.set(None)
            return "Goal cleared."
        if len(argument) > GOAL_CHARS:
            return f"That goal is {len(argument):,} characters; keep it under {GOAL_CHARS:,}."
        self.set(argument)
        return (
            f"Goal set: {argument}\n\nBefore each turn ends, a grader checks the work against "
            f"it and sends it back for revision when it falls short ({rounds} rounds at most)."
        )
