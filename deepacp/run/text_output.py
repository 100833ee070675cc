"""`deepacp run`'s output for people: the answer, tool lines and diffs on stdout, thinking
labelled on stderr; `--quiet` prints the final answer alone."""

from __future__ import annotations

import sys
from typing import TextIO

from deepacp import events
from deepacp.diffs import unified_diff
from deepacp.run import exits
from deepacp.run.output import RunResult, shown_path

THINKING = "thinking: "
"""How a block of the model's thinking starts on stderr (it ends with its own line)."""


def question_text(request: events.PermissionRequest | events.Question, cwd: str) -> str:
    """What is asked, as lines: a question and its numbered choices, or a gated call's
    change (its diff, so it is seen before the answer) and the question whether to make it."""
    if isinstance(request, events.Question):
        choices = (f"  {n}. {choice}" for n, choice in enumerate(request.choices, start=1))
        return "\n".join((request.question, *choices))
    diff, shown = request.diff, ""
    if diff is not None:
        shown = unified_diff(shown_path(diff.path, cwd), diff.old_text, diff.new_text)
    return f"{shown}   allow {request.title!r}?"


class TextOutput:
    """Streams the turn as it happens, for a person reading a terminal."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.asks_on: TextIO = sys.stdout
        self.titles: dict[str, str] = {}
        self.shown_diffs: set[str] = set()
        """Tool calls whose diff was shown with their approval question already."""
        self.mid_line = False
        self.thinking = False

    @property
    def at_line_start(self) -> bool:
        return not self.mid_line and not self.thinking

    def _end_thought(self) -> None:
        if self.thinking:
            print(file=sys.stderr, flush=True)
            self.thinking = False

    def _print(self, text: str) -> None:
        self._end_thought()
        if self.mid_line:
            print()
            self.mid_line = False
        print(text, flush=True)

    def _stream(self, text: str) -> None:
        self._end_thought()
        print(text, end="", flush=True)
        self.mid_line = not text.endswith("\n")

    def _diff(self, diff: events.FileDiff) -> None:
        path = shown_path(diff.path, self.cwd)
        print(unified_diff(path, diff.old_text, diff.new_text), end="", flush=True)

    def event(self, event: events.Event) -> None:
        if isinstance(event, events.MessageChunk | events.ToolOutput):
            self._stream(event.text)
        elif isinstance(event, events.ThoughtChunk):
            if not self.thinking:
                if self.mid_line:
                    self._print("")
                print(THINKING, end="", file=sys.stderr)
                self.thinking = True
            print(event.text, end="", file=sys.stderr, flush=True)
        elif isinstance(event, events.ToolStarted):
            self.titles[event.tool_call_id] = event.title
            self._print(f"-> {event.title}")
        elif isinstance(event, events.ToolFinished):
            self._finished(event)
        elif isinstance(event, events.SubagentStep) and event.status != "completed":
            failed = " (failed)" if event.status == "failed" else ""
            self._print(f"   -> {event.title}{failed}")  # under its task's line
        elif isinstance(event, events.Notice):
            self._print(f"note: {event.text}")
        elif isinstance(event, events.PlanUpdated):
            self._print("plan:")
            for entry in event.entries:
                print(f"  {events.PLAN_MARKS[entry.status]} {entry.content}")

    def _finished(self, event: events.ToolFinished) -> None:
        mark = "ok" if event.status == "completed" else "failed"
        self._print(f"   {mark}: {self.titles.get(event.tool_call_id, event.tool_call_id)}")
        if event.diff is not None and event.tool_call_id not in self.shown_diffs:
            self._diff(event.diff)
        elif event.status == "failed" and event.text.strip():
            print(f"   {event.text.strip().splitlines()[-1]}")

    def asking(self, request: events.PermissionRequest | events.Question) -> None:
        self._print(question_text(request, self.cwd))
        if isinstance(request, events.PermissionRequest) and request.diff is not None:
            self.shown_diffs.add(request.tool_call_id)

    def decided(
        self, request: events.PermissionRequest, outcome: events.PermissionKind, why: str
    ) -> None:
        if why:
            self._print(f"   {why}: {request.title}")

    def finish(self, result: RunResult) -> None:
        self._end_thought()
        if result.error is not None:
            return  # the run printed its one line on stderr
        said = "goal not met" if result.exit_code == exits.GOAL_NOT_MET else result.stop_reason
        self._print(f"[{said}; session {result.session_id}]")


class Unstreamed:
    """Shows nothing while the turn runs (what is asked goes to stderr); `finish` says
    what the run came to."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.asks_on: TextIO = sys.stderr

    @property
    def at_line_start(self) -> bool:
        return True

    def event(self, event: events.Event) -> None:
        pass

    def asking(self, request: events.PermissionRequest | events.Question) -> None:
        print(question_text(request, self.cwd), file=sys.stderr, flush=True)

    def decided(
        self, request: events.PermissionRequest, outcome: events.PermissionKind, why: str
    ) -> None:
        if why:
            print(f"deepacp: {why}: {request.title}", file=sys.stderr, flush=True)

    def finish(self, result: RunResult) -> None:
        raise NotImplementedError


class QuietOutput(Unstreamed):
    """`--quiet`: the final answer alone on stdout, once the turn has ended."""

    def finish(self, result: RunResult) -> None:
        if result.error is None and result.answer:
            print(result.answer, flush=True)
