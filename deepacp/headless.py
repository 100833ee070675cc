"""`deepacp run`: one turn of the session runtime in a terminal."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from deepacp.backends.sandbox import SandboxPolicy
from deepacp.config import Effort, deepacp_home, parse_effort, sandbox_policy
from deepacp.diffs import unified_diff
from deepacp.errors import DeepacpError
from deepacp.events import (
    ASK_IN_CHAT,
    GOAL_ENTRY,
    PLAN_MARKS,
    Event,
    MessageChunk,
    Notice,
    PermissionKind,
    PermissionRequest,
    PlanUpdated,
    Question,
    ThoughtChunk,
    ToolFinished,
    ToolOutput,
    ToolStarted,
)
from deepacp.logs import WithoutTraceback, configure
from deepacp.models import check_provider, configured_spec
from deepacp.profile_setting import configured_profile
from deepacp.secrets import redact
from deepacp.session import Mode, parse_mode

log = logging.getLogger(__name__)

YES_ALWAYS_NO: dict[str, PermissionKind] = {"y": "allow_once", "a": "allow_always"}


class TerminalHandler:
    """Prints a session's events; asks y/n on a terminal, denies without one."""

    def __init__(self, interactive: bool, cwd: str) -> None:
        self.interactive = interactive
        self.cwd = cwd
        self.titles: dict[str, str] = {}
        self.mid_line = False
        self.goal_met = False
        """Whether the goal's plan entry last said the grader found it met."""

    def _print(self, text: str) -> None:
        if self.mid_line:
            print()
            self.mid_line = False
        print(text, flush=True)

    async def emit(self, event: Event) -> None:
        if isinstance(event, MessageChunk):
            print(event.text, end="", flush=True)
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ThoughtChunk):
            print(event.text, end="", file=sys.stderr, flush=True)
        elif isinstance(event, ToolStarted):
            self.titles[event.tool_call_id] = event.title
            self._print(f"-> {event.title}")
        elif isinstance(event, ToolOutput):
            print(event.text, end="", flush=True)
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolFinished):
            mark = "ok" if event.status == "completed" else "failed"
            self._print(f"   {mark}: {self.titles.get(event.tool_call_id, event.tool_call_id)}")
            if event.diff is not None:
                shown = event.diff.path  # a remote workspace's: relative to its root
                if os.path.isabs(shown):
                    shown = os.path.relpath(shown, self.cwd)
                print(unified_diff(shown, event.diff.old_text, event.diff.new_text), end="")
            elif event.status == "failed":
                print(f"   {event.text.strip().splitlines()[-1] if event.text.strip() else ''}")
        elif isinstance(event, Notice):
            self._print(f"note: {event.text}")
        elif isinstance(event, PlanUpdated):
            self._print("plan:")
            for entry in event.entries:
                print(f"  {PLAN_MARKS[entry.status]} {entry.content}")
                if entry.content.startswith(GOAL_ENTRY):
                    self.goal_met = entry.status == "completed"

    async def ask(self, question: Question) -> str | None:
        if not self.interactive:
            return ASK_IN_CHAT
        self._print(question.question)
        for number, choice in enumerate(question.choices, start=1):
            print(f"  {number}. {choice}")
        answer = (await asyncio.to_thread(input, "   answer: ")).strip()
        if answer.isdigit() and 0 < int(answer) <= len(question.choices):
            return question.choices[int(answer) - 1]
        return answer

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None:
        if not self.interactive:
            way = "use --mode yolo"
            if request.outside_sandbox:  # asked in every mode: yolo does not answer it
                way = "--sandbox off runs every command unsandboxed"
            self._print(f"   denied (no terminal to ask; {way}): {request.title}")
            return "reject_once"
        self._print(f"   allow {request.title!r}?")
        answer = await asyncio.to_thread(input, "   [y]es, [a]lways, [n]o: ")
        return YES_ALWAYS_NO.get(answer.strip().lower()[:1], "reject_once")


async def _run(
    prompt: str,
    cwd: Path,
    spec: str,
    mode: Mode,
    effort: Effort | None,
    sandbox: SandboxPolicy,
    goal: str | None = None,
    remote_url: str | None = None,
    server: str | None = None,
    profile: str | None = None,
) -> int:
    from deepacp.models import resolve_model
    from deepacp.session import ServerThreads, SessionManager, Workspace, open_store

    manager = SessionManager(
        open_store(deepacp_home()),
        resolve_model,
        sandbox=sandbox,
        server=ServerThreads(server) if server else None,
        remote=remote_url,
        profile=profile,
    )
    handler = TerminalHandler(sys.stdin.isatty(), str(cwd))
    try:
        await manager.reach()
        record = manager.new_record(str(cwd), mode, spec, effort, goal)
        # One prompt, then the process ends: a background task here would end with it.
        session = manager.open(record, Workspace(str(cwd)), handler, False)
        await manager.make_thread(session)
        stopped_by: list[int] = []
        turn = asyncio.create_task(session.prompt(prompt))

        def stop_on(sig: int) -> None:  # stop the turn (and its command), then exit
            stopped_by.append(sig)
            turn.cancel()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop_on, sig)
        try:
            stop = await turn
        except asyncio.CancelledError:
            if not stopped_by:
                raise
            return 128 + stopped_by[0]
    finally:
        await manager.shutdown()  # the session is closed, its MCP servers and claim released
    if goal and stop == "end_turn" and not handler.goal_met:
        handler._print(f"[goal not met; session {record.id}]")
        return 1
    handler._print(f"[{stop}; session {record.id}]")
    return 0 if stop == "end_turn" else 1


def run_headless(
    prompt: str,
    cwd: str | None,
    model: str | None,
    mode: str,
    effort: str | None = None,
    sandbox: SandboxPolicy | None = None,
    goal: str | None = None,
    remote: str | None = None,
    server: str | None = None,
    profile: str | None = None,
) -> int:
    """Run one prompt; with `server`, on that LangGraph server (its model unless `model`
    is given, and its files: `cwd` is the workspace path there)."""
    workspace = Path(cwd or ".").resolve()
    if not workspace.is_dir() and not server:
        raise SystemExit(f"deepacp: {workspace} is not a directory")
    if server:
        spec = model or ""
    else:
        spec = configured_spec(model)
        check_provider(spec)
    level = parse_effort(effort, "--effort") if effort is not None else None
    policy = sandbox_policy(sandbox)
    goal = goal.strip() if goal else None
    profile = configured_profile(profile)
    held = WithoutTraceback()
    log_file = configure("run", terminal=held)
    failed = False
    try:
        return asyncio.run(
            _run(
                prompt,
                workspace,
                spec,
                parse_mode(mode),
                level,
                policy,
                goal,
                remote,
                server,
                profile,
            )
        )
    except Exception as exc:  # a provider's error among them: it may echo the key back
        failed = True
        if not isinstance(exc, DeepacpError):
            log.exception("deepacp run failed")
        print(f"deepacp: {redact(first_line(exc))}", file=sys.stderr)
        return 2 if isinstance(exc, DeepacpError) else 1
    finally:
        if (failed or held.held) and log_file is not None:
            print(f"deepacp: the details are in {log_file}", file=sys.stderr)


def first_line(exc: Exception) -> str:
    """What a failed run prints: our errors' message; another's type too (the first line:
    the rest, a provider's whole answer, say, is in the log)."""
    lines = str(exc).strip().splitlines() or [""]
    return lines[0] if isinstance(exc, DeepacpError) else f"{type(exc).__name__}: {lines[0]}"
