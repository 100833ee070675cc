"""`deepacp run`: one turn of the session runtime in a terminal or a script. What it
prints is an `Output` (`deepacp/run/`); this module opens the session and drives the turn."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from deepacp.backends.sandbox import SandboxPolicy
from deepacp.config import deepacp_home, parse_effort, sandbox_policy
from deepacp.errors import ConfigError, DeepacpError
from deepacp.events import (
    ASK_IN_CHAT,
    Event,
    PermissionKind,
    PermissionRequest,
    Question,
    StopReason,
)
from deepacp.logs import WithoutTraceback, configure
from deepacp.models import check_provider, configured_spec
from deepacp.profile_setting import configured_profile
from deepacp.run import exits
from deepacp.run.json_output import JsonOutput, StreamJsonOutput
from deepacp.run.output import Format, Output, RunResult, Tally, usage_of
from deepacp.run.prompt import attached, prompt_content, prompt_text
from deepacp.run.status import StatusLine
from deepacp.run.text_output import QuietOutput, TextOutput
from deepacp.secrets import redact
from deepacp.session import parse_mode

if TYPE_CHECKING:
    from deepacp.session import Session, SessionManager, SessionRecord

log = logging.getLogger(__name__)

YES_ALWAYS_NO: dict[str, PermissionKind] = {"y": "allow_once", "a": "allow_always"}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class RunOptions:
    """What `deepacp run` was told on its command line."""

    prompt: str | None
    cwd: str | None = None
    model: str | None = None
    mode: str | None = None
    effort: str | None = None
    sandbox: SandboxPolicy | None = None
    goal: str | None = None
    remote: str | None = None
    server: str | None = None
    files: tuple[str, ...] = ()
    output_format: Format = "text"
    quiet: bool = False
    max_turns: int | None = None
    resume: str | None = None
    continue_last: bool = False
    profile: str | None = None


def output_for(form: Format, quiet: bool, cwd: str) -> Output:
    """The output `--output-format` and `--quiet` ask for."""
    if form == "json":
        return JsonOutput(cwd)
    if form == "stream-json":
        return StreamJsonOutput(cwd)
    return QuietOutput(cwd) if quiet else TextOutput(cwd)


def _read_answer(stream: TextIO, prompt: str) -> str:
    stream.write(prompt)
    stream.flush()
    return sys.stdin.readline()


class TerminalHandler:
    """The session's handler: its events to the output, the tally and the status line;
    questions asked on a terminal, denied without one."""

    def __init__(self, output: Output, tally: Tally, status: StatusLine, interactive: bool):
        self.output = output
        self.tally = tally
        self.status = status
        self.interactive = interactive

    async def emit(self, event: Event) -> None:
        self.status.clear()
        self.tally.feed(event)
        self.output.event(event)
        self.status.after(event, self.output.at_line_start)

    async def ask(self, question: Question) -> str | None:
        if not self.interactive:
            return ASK_IN_CHAT
        self.status.clear()
        self.output.asking(question)
        answer = (await asyncio.to_thread(_read_answer, self.output.asks_on, "   answer: ")).strip()
        if answer.isdigit() and 0 < int(answer) <= len(question.choices):
            return question.choices[int(answer) - 1]
        return answer

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None:
        self.status.clear()
        if not self.interactive:
            way = "use --mode yolo"
            if request.outside_sandbox:  # asked in every mode: yolo does not answer it
                way = "--sandbox off runs every command unsandboxed"
            self.output.decided(request, "reject_once", f"denied (no terminal to ask; {way})")
            return "reject_once"
        self.output.asking(request)
        prompt = "   [y]es, [a]lways, [n]o: "
        answer = await asyncio.to_thread(_read_answer, self.output.asks_on, prompt)
        outcome = YES_ALWAYS_NO.get(answer.strip().lower()[:1], "reject_once")
        self.output.decided(request, outcome, "")
        return outcome


class Run:
    """One run: the session it opens or resumes, the turn, and what it reports."""

    def __init__(self, options: RunOptions, cwd: Path, spec: str, content: str | list[dict]):
        self.options = options
        self.cwd = cwd
        self.spec = spec
        self.content = content
        self.output = output_for(options.output_format, options.quiet, str(cwd))
        self.tally = Tally(str(cwd))
        self.status = StatusLine()
        self.session_id: str | None = None
        self.stop: StopReason | None = None
        self.goal: str | None = None
        """The session's goal (a resumed one's too): the exit code says whether it was met."""
        self.usage: dict[str, int] = {}

    def _record(self, manager: SessionManager) -> SessionRecord:
        """The session to prompt: the one resumed, the last here, or a new one."""
        options = self.options
        if options.resume or options.continue_last:
            if options.goal:
                raise ConfigError("--goal starts a new session: send `/goal TEXT` to this one")
            if options.resume:
                return manager.record(options.resume, str(self.cwd) if options.cwd else None)
            found = [r for r in manager.records(str(self.cwd)) if r.title is not None]
            if not found:
                raise ConfigError(f"no session to continue in {self.cwd}")
            return found[0]
        mode = parse_mode(options.mode or "ask")
        effort = parse_effort(options.effort, "--effort") if options.effort else None
        goal = options.goal.strip() if options.goal else None
        return manager.new_record(str(self.cwd), mode, self.spec, effort, goal)

    async def _resumed(self, session: Session) -> None:
        """A resumed session told what this command line changes (mode, model, effort)."""
        options = self.options
        if options.mode and options.mode != session.record.mode:
            await session.set_mode(parse_mode(options.mode))
        if options.model and options.model != session.record.model:
            await session.set_model(self.spec)
        elif not options.server:
            check_provider(configured_spec(session.record.model))
        if options.effort:
            await session.set_effort(parse_effort(options.effort, "--effort"))

    async def __call__(self, manager: SessionManager) -> int:
        from deepacp.session import Workspace

        self.status.start()
        self.status.show("starting")
        handler = TerminalHandler(self.output, self.tally, self.status, sys.stdin.isatty())
        try:
            await manager.reach()
            record = self._record(manager)
            self.session_id, self.goal = record.id, record.goal
            # One prompt, then the process ends: a background task here would end with it.
            session = manager.open(record, Workspace(record.cwd), handler, False)
            if self.options.resume or self.options.continue_last:
                await self._resumed(session)
            else:
                await manager.make_thread(session)
            session.ctx.max_model_calls = self.options.max_turns
            self.status.show("thinking")
            code = await self._turn(session)
            self.usage = usage_of(session.last_turn_usage)
            return code
        finally:
            await self.status.stop()
            await manager.shutdown()  # the session is closed, its MCP servers and claim released

    async def _turn(self, session: Session) -> int:
        """Prompt the session; a signal cancels the turn (and its command), then exits."""
        stopped_by: list[int] = []
        turn = asyncio.create_task(session.prompt(self.content))

        def stop_on(sig: int) -> None:
            stopped_by.append(sig)
            turn.cancel()

        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop_on, sig)
        try:
            self.stop = await turn
        except asyncio.CancelledError:
            if not stopped_by:
                raise
            self.stop = "cancelled"
            return exits.CANCELLED if stopped_by[0] == signal.SIGINT else 128 + stopped_by[0]
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
        return exits.for_stop(self.stop, self.tally.goal_met if self.goal else None)

    def result(self, code: int, error: str | None = None) -> RunResult:
        return RunResult(
            answer=self.tally.final_answer,
            stop_reason=self.stop,
            exit_code=code,
            session_id=self.session_id,
            usage=self.usage,
            files_changed=tuple(self.tally.files),
            error=error,
        )


def run_headless(options: RunOptions) -> int:
    """Run one prompt; with `server`, on that LangGraph server (its model unless `model`
    is given, and its files: `cwd` is the workspace path there)."""
    workspace = Path(options.cwd or ".").resolve()
    if not workspace.is_dir() and not options.server:
        raise ConfigError(f"{workspace} is not a directory")
    text = prompt_text(options.prompt)
    content = prompt_content(text, attached(list(options.files), Path.cwd()))
    resuming = options.resume or options.continue_last
    if options.server or (resuming and not options.model):
        spec = options.model or ""
    else:
        spec = configured_spec(options.model)
        check_provider(spec)
    if options.effort is not None:
        parse_effort(options.effort, "--effort")
    if options.mode is not None:
        parse_mode(options.mode)
    configured_profile(options.profile)  # a bad name is one line, before anything starts
    held = WithoutTraceback()
    log_file = configure("run", terminal=held)
    run = Run(options, workspace, spec, content)
    failed = False
    try:
        code = asyncio.run(_with_manager(run, options))
        run.output.finish(run.result(code))
        return code
    except Exception as exc:  # a provider's error among them: it may echo the key back
        failed = True
        if not isinstance(exc, DeepacpError):
            log.exception("deepacp run failed")
        line = redact(first_line(exc))
        print(f"deepacp: {line}", file=sys.stderr)
        code = exits.for_error(exc)
        run.output.finish(run.result(code, line))
        return code
    finally:
        if (failed or held.held) and log_file is not None:
            print(f"deepacp: the details are in {log_file}", file=sys.stderr)


async def _with_manager(run: Run, options: RunOptions) -> int:
    from deepacp.models import resolve_model
    from deepacp.session import ServerThreads, SessionManager, open_store

    manager = SessionManager(
        open_store(deepacp_home()),
        resolve_model,
        sandbox=sandbox_policy(options.sandbox),
        server=ServerThreads(options.server) if options.server else None,
        remote=options.remote,
        profile=configured_profile(options.profile),
    )
    return await run(manager)


def first_line(exc: Exception) -> str:
    """What a failed run prints: our errors' message; another's type too (the first line:
    the rest, a provider's whole answer, say, is in the log)."""
    lines = str(exc).strip().splitlines() or [""]
    return lines[0] if isinstance(exc, DeepacpError) else f"{type(exc).__name__}: {lines[0]}"
