"""SessionHooks: one session's hooks — loaded (and, for the workspace's, trusted) at each
prompt, run on its events, their failures told to the user and logged, never raised."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import logging
from pathlib import Path
from typing import Any

from deepacp.backends.sandbox import Sandbox
from deepacp.events import Notice, StopReason
from deepacp.harness import ALLOW, HookDecision
from deepacp.secrets import clip, redact_any, secret_values
from deepacp.session.handler import SessionHandler
from deepacp.session.hooks.config import (
    BLOCKING,
    HOOKS_FILE,
    MATCHED_EVENTS,
    PROJECT_HOOKS,
    Hook,
    HooksConfigError,
    HooksFile,
    Source,
    read_hooks,
)
from deepacp.session.hooks.process import Verdict, run_hook, verdict
from deepacp.session.hooks.trust import HookTrust, trust_question

log = logging.getLogger(__name__)

TEXT_LIMIT = 10_000
"""Characters of any text in a payload (tool output, prompt, arguments after the call);
a field cut to it is named in the payload's `truncated`."""
WHOLE_ARGS_EVENTS = frozenset({"pre_tool_use", "permission_request"})
"""Events whose `tool_args` are sent whole: a hook may need them exactly, to judge or rewrite."""
MAX_RUNNING = 4
"""Non-blocking hooks running at once; more wait their turn."""
MAX_WAITING = 256
"""Non-blocking hooks waiting or running; beyond it a hook is dropped (and logged)."""
MAX_STOP_CONTINUES = 1
"""How many times per turn a stop hook can send the agent back to work."""


def clipped(value: Any, limit: int, name: str, cut: list[str]) -> Any:
    """`value` with every string in it cut to `limit` characters; `cut` gets `name` if any was."""
    if isinstance(value, str):
        if len(value) > limit and name not in cut:
            cut.append(name)
        return clip(value, limit)
    if isinstance(value, dict):
        return {k: clipped(v, limit, name, cut) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clipped(v, limit, name, cut) for v in value]
    return value


def hook_payload(event: str, fields: dict[str, Any], common: dict[str, Any]) -> dict[str, Any]:
    """The JSON a hook reads: `common` (event, session, cwd, seq) and the event's `fields`,
    long texts cut to `TEXT_LIMIT`, secrets redacted."""
    cut: list[str] = []
    body: dict[str, Any] = {"event": event, **common}
    for name, value in fields.items():
        whole = name == "tool_args" and event in WHOLE_ARGS_EVENTS
        body[name] = value if whole else clipped(value, TEXT_LIMIT, name, cut)
    body["truncated"] = cut
    return redact_any(body, secret_values())


class SessionHooks:
    """The hooks of the session `session_id`, in the workspace `cwd`. It is the harness's
    `HookRunner` for the tool events; the session runtime calls the rest."""

    def __init__(
        self,
        session_id: str,
        cwd: str,
        home: Path,
        handler: SessionHandler,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.home = home
        self.handler = handler
        self.sandbox = sandbox
        self.hooks: tuple[Hook, ...] = ()
        self.trust = HookTrust(home)
        self._answered: dict[str, bool] = {}  # hooks-file digest -> this session's answer
        self._told: set[str] = set()
        self._seq = itertools.count(1)
        self._slots = asyncio.Semaphore(MAX_RUNNING)
        self._background: set[asyncio.Task] = set()
        self._started = False

    async def load(self) -> None:
        """Read the user's and the workspace's hooks files again; the workspace's count only
        once the user trusts it as it is now (asked the first time, and after a change)."""
        user = self.home / HOOKS_FILE
        project = Path(self.cwd) / PROJECT_HOOKS
        sources: list[tuple[Path, Source]] = [(user, "user")]
        if project.resolve() != user.resolve():
            sources.append((project, "project"))
        found: list[Hook] = []
        for path, source in sources:
            try:
                file = await asyncio.to_thread(read_hooks, path, source)
            except HooksConfigError as exc:
                await self._tell_once(str(exc))
                continue
            if file is not None and file.hooks and (source == "user" or await self._trusted(file)):
                found += file.hooks
        self.hooks = tuple(found)

    async def _trusted(self, file: HooksFile) -> bool:
        trusted = self._answered.get(file.digest)
        if trusted is None:
            trusted = self.trust.answer(self.cwd, file.digest)
        if trusted is None:
            try:
                question = trust_question(file)
            except HooksConfigError as exc:
                await self._tell_once(str(exc))
                return False  # not remembered: a shorter file is asked about
            answer = await self.handler.ask_permission(question)
            if answer is None:
                return False  # the question was cancelled: asked again next time
            trusted = answer in ("allow_once", "allow_always")
            if answer in ("allow_always", "reject_always"):
                try:
                    self.trust.remember(self.cwd, file.digest, trusted)
                except OSError as exc:
                    await self._tell_once(
                        f"Could not remember the answer ({exc}): it holds for this session."
                    )
        self._answered[file.digest] = trusted
        if not trusted:
            await self._tell_once(f"The hooks in {file.path} are not trusted, so they do not run.")
        return trusted

    async def _tell_once(self, text: str) -> None:
        if text not in self._told:
            self._told.add(text)
            log.warning("%s", text)
            await self._emit(Notice(text))

    async def _emit(self, notice: Notice) -> None:
        try:
            await self.handler.emit(notice)
        except Exception:
            log.exception("could not tell session %s about its hooks", self.session_id)

    def _matching(self, event: str, fields: dict[str, Any]) -> list[Hook]:
        return [
            h
            for h in self.hooks
            if h.event == event and (event not in MATCHED_EVENTS or h.matches(fields))
        ]

    def _payload(self, event: str, fields: dict[str, Any]) -> bytes:
        common = {"session_id": self.session_id, "cwd": self.cwd, "seq": next(self._seq)}
        return json.dumps(hook_payload(event, fields, common), default=str).encode()

    async def __call__(self, event: str, fields: dict[str, Any], /) -> HookDecision:
        """The harness's runner: blocking events decide, the others are fired."""
        if event not in BLOCKING:
            self.fire(event, fields)
            return ALLOW
        found = await self.decide(event, fields)
        if found.decision == "deny":
            return HookDecision(False, found.reason or "no reason given")
        if found.args is not None:
            name, call_id = fields.get("tool_name"), fields.get("tool_call_id")
            await self._emit(Notice(f"A hook changed the arguments of {name} ({call_id})."))
        return HookDecision(args=found.args)

    def fire(self, event: str, fields: dict[str, Any]) -> None:
        """Start the hooks of a non-blocking event in the background, and return."""
        for hook in self._matching(event, fields):
            if len(self._background) >= MAX_WAITING:
                log.warning("%d hooks are waiting: the %s hook was dropped", MAX_WAITING, event)
                continue
            task = asyncio.create_task(self._in_background(hook, self._payload(event, fields)))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _in_background(self, hook: Hook, payload: bytes) -> None:
        async with self._slots:
            await self._run(hook, payload, blocking=False)

    async def decide(self, event: str, fields: dict[str, Any]) -> Verdict:
        """The hooks of a blocking event, one after another in file order (the user's file
        first): the first `deny` wins; a rewrite of the tool args is what the next one sees."""
        decided = Verdict()
        for hook in self._matching(event, fields):
            found = await self._run(hook, self._payload(event, fields), blocking=True)
            if found.decision == "deny":
                return found
            if found.args is not None:
                fields = {**fields, "tool_args": found.args}
                decided = dataclasses.replace(decided, args=found.args)
            if found.decision == "allow":
                decided = dataclasses.replace(decided, decision="allow", reason=found.reason)
        return decided

    async def _run(self, hook: Hook, payload: bytes, *, blocking: bool) -> Verdict:
        try:
            run = await run_hook(
                hook.command,
                payload,
                cwd=Path(self.cwd),
                timeout=hook.timeout,
                sandbox=self.sandbox,
            )
            found = verdict(
                run, blocking=blocking, timeout=hook.timeout, rewrites=hook.event == "pre_tool_use"
            )
            if run.guarded is not None:
                who = f"The {hook.event} hook `{clip(hook.command, 200)}`"
                if told := run.guarded.notice(who, Path(self.cwd).resolve(), undone_too=True):
                    log.warning("session %s: %s", self.session_id, told)
                    await self._emit(Notice(told))
        except OSError as exc:
            found = Verdict(problem=f"could not start ({exc.strerror or exc})")
        except Exception as exc:  # a hook never breaks the turn
            log.exception("the %s hook of session %s failed", hook.event, self.session_id)
            found = Verdict(problem=f"could not run ({type(exc).__name__})")
        if found.problem is not None:
            text = f"The {hook.event} hook `{clip(hook.command, 200)}` {found.problem}."
            log.warning("session %s: %s", self.session_id, text)
            await self._emit(Notice(text))
        return found

    async def before_prompt(self, text: str) -> str | None:
        """Load the hooks, start the session's (the first time) and run `user_prompt_submit`:
        the reason a hook refused the prompt, or None."""
        await self.load()
        if not self._started:
            self._started = True
            self.fire("session_start", {})
        found = await self.decide("user_prompt_submit", {"prompt": text})
        return (found.reason or "no reason given") if found.decision == "deny" else None

    async def stopping(self, reason: StopReason, continued: int) -> str | None:
        """Run the `stop` hooks as the agent ends its turn: the message that sends it back
        to work, or None (always None once it was sent back `MAX_STOP_CONTINUES` times)."""
        fields = {"stop_reason": reason, "continued": continued}
        if continued >= MAX_STOP_CONTINUES:
            self.fire("stop", fields)
            return None
        found = await self.decide("stop", fields)
        if found.decision != "deny":
            return None
        message = found.reason or "no reason given"
        await self._emit(Notice(f"A stop hook sent the agent back to work: {message}"))
        return f"A stop hook does not let you stop yet: {message}"  # replayed as said

    async def compacting(self, trigger: str) -> None:
        self.fire("pre_compact", {"trigger": trigger})

    async def close(self) -> None:
        """Run `session_end` (when the session started here) and wait for the hooks still
        running, each at most until its timeout."""
        if self._started:
            self.fire("session_end", {})
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
