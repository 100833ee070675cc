"""RestorePart: every prompt is a restore point (`snapshots.RestorePoints`: where the
conversation was, and the files its turn changed as they were before), which `/undo`,
`/rewind`, `/fork`, the ACP face's rewind and edit-prompt, and forks are built on."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from deepacp.backends.protocol import Backend
from deepacp.events import Command, Question
from deepacp.session.parts.base import CommandHandler, Part, PromptStart
from deepacp.session.rewind import RecordingBackend, Restored, conflicts, finish_turn, restore
from deepacp.session.snapshots import RestorePoint, RestorePoints
from deepacp.session.store import SessionRecord

UNDO, REWIND, FORK = "undo", "rewind", "fork"
FORCE, KEEP = "--force", "--keep"
RESTORE_ANYWAY, KEEP_MINE, CANCEL = "Restore anyway", "Keep mine", "Cancel"
CHOICES = 10
"""`/rewind` offers the last this many prompts to pick from (it lists them all)."""
COMMANDS = (
    Command(UNDO, "Take back the last turn: its file changes and its messages"),
    Command(
        REWIND,
        "List the prompts, or go back to before prompt N (files and conversation)",
        hint="N [--force | --keep]",
    ),
    Command(FORK, "Copy this session (conversation and restore points) into a new one"),
)


class RestorePart(Part):
    def __init__(self, points: RestorePoints) -> None:
        self.points = points

    def recorded(self, workspace: Backend) -> Backend:
        """`workspace`, recording what each turn changes in it."""
        return RecordingBackend(workspace, self.points)

    def commands(self) -> Sequence[tuple[Command, CommandHandler]]:
        undo, rewind, fork = COMMANDS
        return ((undo, self._undo), (rewind, self._rewind), (fork, self._fork))

    async def prompt_started(self, prompt: PromptStart) -> None:
        self.points.begin(prompt.title, prompt.thread_id, prompt.checkpoint_id)
        if self.points.recording is not None:  # the point goes by the prompt's id
            self.points.recording.message_id = prompt.message_id
            self.points.save()

    async def prompt_ended(self, prompt: PromptStart) -> None:
        await finish_turn(self.ctx.backend, self.points)

    def prompts(self) -> list[RestorePoint]:
        """The prompts that can be rewound to, first to last."""
        return list(self.points.points)

    def number(self, message_id: str) -> int | None:
        """The number (from 1) of the prompt with this id; None: no such prompt."""
        ids = [p.message_id for p in self.points.points]
        return ids.index(message_id) + 1 if message_id in ids else None

    async def fork(self) -> SessionRecord:
        """A new session with this one's conversation and restore points so far, titled
        "fork of …"; the two diverge from here."""
        ctx = self.ctx
        ctx.host.here("forked")
        forked = await ctx.records.fork(ctx.record, f"fork of {ctx.record.title or 'Untitled'}")
        self.points.copy_to(forked.id, {ctx.record.thread_id: forked.thread_id})
        return forked

    async def rewind(self, number: int, *, force: bool = False, keep: bool = False) -> Restored:
        """Go back to before prompt `number` (from 1): its files and later ones as they were
        (created ones removed, deleted ones back) and the conversation as it was. Files the
        user changed since the agent did are conflicts: nothing happens unless `force`
        (restore them anyway) or `keep` (rewind the rest, keep the user's). The turns taken
        back stay in a fork of the session."""
        ctx = self.ctx
        ctx.host.here("rewound")
        points = self.points.points[number - 1 :]
        found = await conflicts(ctx.backend, points)
        if found and not (force or keep):
            return Restored(conflicts=found)
        await ctx.taken_back({p.message_id for p in points})
        kept = await self.fork()
        done = await restore(ctx.backend, self.points, points, set() if force else set(found))
        done.fork = kept
        point = points[0]
        if point.checkpoint_id is None or point.thread_id != ctx.record.thread_id:
            await ctx.clear()
        else:
            at = {
                "configurable": {"thread_id": point.thread_id, "checkpoint_id": point.checkpoint_id}
            }
            await (await ctx.graph()).aupdate_state(at, None, as_node="__copy__")
        self.points.truncate(number - 1)
        return done

    async def cleared(self) -> None:
        self.points.truncate(0)  # their checkpoints went with the thread

    async def closed(self) -> None:
        self.points.release()

    async def _ask(self, question: str, choices: list[str]) -> str | None:
        """One of `choices` through the face's choice UI; None when not picked (or not asked)."""
        asked = Question(f"{REWIND}-{uuid.uuid4().hex}", question, tuple(choices))
        answer = await self.ctx.handler.ask(asked)
        return answer if answer in choices else None

    async def _undo(self, argument: str) -> str:
        count = len(self.points.points)
        if count == 0:
            return "Nothing to undo yet."
        return await self._rewind(f"{count} {argument}")

    async def _rewind(self, argument: str) -> str:
        prompts = self.prompts()
        words = argument.split()
        if not words:
            if not prompts:
                return "No prompts to rewind to yet."
            labels = [f"{n}. {p.prompt or '(no text)'}" for n, p in enumerate(prompts, start=1)]
            picked = await self._ask(
                "Rewind to before which prompt? Its changes and later ones are undone.",
                labels[-CHOICES:],
            )
            if picked is None:
                return "Prompts (/rewind N goes back to before prompt N):\n\n" + "\n".join(labels)
            return await self._rewind_to(labels.index(picked) + 1, set())
        flags = {w for w in words if w.startswith("--")}
        numbers = [w for w in words if not w.startswith("--")]
        if flags - {FORCE, KEEP} or len(numbers) != 1 or not numbers[0].isdigit():
            return "Usage: /rewind N [--force | --keep] (/rewind alone lists the prompts)."
        number = int(numbers[0])
        if not 1 <= number <= len(prompts):
            return f"There is no prompt {number}; /rewind lists the {len(prompts)} there are."
        return await self._rewind_to(number, flags)

    async def _rewind_to(self, number: int, flags: set[str]) -> str:
        prompt = self.points.points[number - 1].prompt
        done = await self.rewind(number, force=FORCE in flags, keep=KEEP in flags)
        if done.conflicts and not (flags & {FORCE, KEEP}):
            files = ", ".join(done.conflicts)
            answer = await self._ask(
                f"You changed these files after the agent did: {files}. Rewind them too?",
                [RESTORE_ANYWAY, KEEP_MINE, CANCEL],
            )
            if answer not in (RESTORE_ANYWAY, KEEP_MINE):
                return (
                    f"Not rewound: you changed these files after the agent did: {files}. "
                    f"/rewind {number} --force restores them anyway; "
                    f"/rewind {number} --keep rewinds the rest and keeps your versions."
                )
            done = await self.rewind(
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
                "Not kept (too large, holding a secret, over the storage budget, or gone from "
                f"git), left as they are: {', '.join(done.lost)}."
            )
        return "\n\n".join(lines)

    async def _fork(self, argument: str) -> str:
        forked = await self.fork()
        return (
            f'Forked into "{forked.title}": it holds this conversation so far and goes its own '
            "way from here; open it from the session list. This session carries on."
        )
