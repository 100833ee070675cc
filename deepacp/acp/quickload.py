"""The quick load: a fresh process answers its first `session/load` from what the last load
of that session sent, while the ACP SDK is still being imported.

A session's transcript is what its last load sent (or, kept as the session closed, what a
load would send): the `session/update`s and the response, as JSON. When a fresh process's
first request after `initialize` is a plain `session/load` (no MCP servers, no additional
directories) of a session whose transcript is still current, the transcript is written out
as it is, with nothing but the standard library needed, whenever the request comes:
importing the SDK alone takes longer than the whole answer.

Current means made from the same inputs: the saved replay the load draws (its thread's
latest checkpoint and the code, `replays.py`), the session's record, config.toml, the
`DEEPACP_*` environment, the command-line options and the client's capabilities. Those are
kept as a hash, not as they are. Once the SDK is loaded, the agent runs the load the usual
way without sending it and sends what differs (`Loads.adopt`), so an input this key misses
is corrected a moment later.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from deepacp.acp.transport import StdioTransport
from deepacp.config import ServerOptions
from deepacp.events import CommandsChanged, ModeChanged
from deepacp.private import write_private
from deepacp.session import Replays, SessionRecord, Store, code_stamp, file_stamp, replays_of

if TYPE_CHECKING:  # the SDK is imported after the quick load has answered
    from pydantic import BaseModel

    from deepacp.acp.client import AcpSessionHandler
    from deepacp.session import Session

log = logging.getLogger(__name__)

_SESSION_ID = re.compile(r"[0-9a-f]{32}")
HANDOFF_SECONDS = 0.0002
"""The switch interval while the quick load answers (see `_prompt_handoffs`)."""


class Transcripts:
    """The load transcripts of the sessions whose replays `replays` saves, beside them."""

    def __init__(self, replays: Replays, options: ServerOptions, client_params: dict) -> None:
        self.replays = replays
        code_stamp()  # read once a process: now, see `transcripts_of`
        self._inputs = [  # the same for every session of this process
            file_stamp(replays.home / "config.toml"),
            sorted((k, v) for k, v in os.environ.items() if k.startswith("DEEPACP_")),
            dataclasses.asdict(options),
            client_params.get("clientCapabilities"),
        ]

    def path(self, session_id: str) -> Path:
        return self.replays.load_path(session_id)

    def _keys(self, record: SessionRecord) -> tuple[dict[str, Any], str] | None:
        """The key of the replay a load of `record` draws, and the hash of everything the
        load is made from (None: nothing to keep)."""
        replay = self.replays.key(record.thread_id, (record.cwd,))
        if replay is None:
            return None
        fields = {k: v for k, v in dataclasses.asdict(record).items() if k != "updated_at"}
        material = json.dumps([replay, fields, self._inputs], sort_keys=True, default=str)
        return replay, hashlib.sha256(material.encode()).hexdigest()

    def key(self, record: SessionRecord) -> str | None:
        """What a load of `record`, made now, is kept under (None: it is not kept)."""
        keys = self._keys(record)
        return keys and keys[1]

    def _kept_key(self, session_id: str) -> str | None:
        try:
            with self.path(session_id).open("rb") as file:
                return json.loads(file.readline())
        except (OSError, ValueError):
            return None

    def is_current(self, record: SessionRecord) -> bool:
        """Whether the kept transcript of `record` is the one a load would send now."""
        key = self.key(record)
        return key is not None and self._kept_key(record.id) == key

    def read(self, record: SessionRecord) -> tuple[list[dict], dict] | None:
        """The updates and the response a load of `record` sends, if still current (and
        its saved replay with it: the agent's own load reads that, not the checkpoints)."""
        keys = self._keys(record)
        if keys is None or not self.replays.is_saved(record.id, keys[0]):
            return None
        try:
            with self.path(record.id).open("rb") as file:
                if json.loads(file.readline()) != keys[1]:
                    return None
                kept = json.loads(file.read())
        except (OSError, ValueError):
            return None
        if not isinstance(kept, dict):
            return None
        updates, result = kept.get("updates"), kept.get("result")
        if not isinstance(updates, list) or not isinstance(result, dict):
            return None
        return updates, result

    def save(self, session_id: str, key: str | None, updates: list[dict], result: dict) -> None:
        """Keep what a load sent, made from the inputs `key` names (None: nothing kept)."""
        if key is None:
            return
        try:
            body = json.dumps({"updates": updates, "result": result}, ensure_ascii=False)
            write_private(self.path(session_id), f"{json.dumps(key)}\n{body}".encode())
        except (OSError, TypeError, ValueError):
            log.debug("load transcript of session %s not kept", session_id, exc_info=True)


@dataclass
class QuickLoad:
    """A `session/load` answered from its transcript, for the agent to take over."""

    record: SessionRecord
    updates: list[dict]
    result: dict


def _plain_load(message: dict) -> tuple[str, str] | None:
    """The session id and cwd of a `session/load` the transcript can answer (None: the
    agent answers it, whatever it is)."""
    if message.get("method") != "session/load" or "id" not in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    session_id, cwd = params.get("sessionId"), params.get("cwd")
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        return None
    if not isinstance(cwd, str) or not Path(cwd).is_absolute():
        return None
    if params.get("mcpServers") or params.get("additionalDirectories"):
        return None
    return session_id, cwd


def transcripts_of(options: ServerOptions, client_params: dict, store: Store) -> Transcripts | None:
    """The load transcripts of the sessions in `store` (None: theirs are not kept, see
    `replays_of`). Made before the SDK's import begins: what they read once a process
    (the code stamp, a few hundred files' dates) would otherwise wait for the interpreter
    after each file, the import holding it."""
    replays = replays_of(store, options.server, options.remote)
    return None if replays is None else Transcripts(replays, options, client_params)


async def answer_load(
    transport: StdioTransport, transcripts: Transcripts | None, store: Store
) -> QuickLoad | None:
    """Wait for the first request after `initialize` and answer it from its transcript if
    it is a `session/load` that can be (None: it is left for the agent, unread, as is
    anything that fails here)."""
    if transcripts is None:
        return None
    message = await transport.peek()
    if message is None or (load := _plain_load(message)) is None:
        return None
    with _prompt_handoffs():
        return await _answer(transport, transcripts, store, message, *load)


async def _answer(
    transport: StdioTransport,
    transcripts: Transcripts,
    store: Store,
    message: dict,
    session_id: str,
    cwd: str,
) -> QuickLoad | None:
    try:
        record = store.get(session_id)
        if record is None or Path(cwd).resolve() != Path(record.cwd).resolve():
            return None
        kept = transcripts.read(record)
        if kept is None:
            return None
        store.claim(session_id)  # open in another process: the agent says so
    except Exception:  # a store that cannot be read, a claim refused: the agent answers
        log.debug("session/load of %s left to the agent", session_id, exc_info=True)
        return None
    await transport.receive()  # the request peeked at
    updates, result = kept
    for update in updates:
        params = {"sessionId": session_id, "update": update}
        await transport.send({"jsonrpc": "2.0", "method": "session/update", "params": params})
    await transport.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    return QuickLoad(record, updates, result)


@contextlib.contextmanager
def _prompt_handoffs() -> Iterator[None]:
    """The interpreter handed back to this thread at once when it has waited for the disk
    or the database. The SDK is likely being imported in another thread meanwhile, and
    this thread would wait for it up to the switch interval (5 ms) after each such wait,
    a hundred times in one answer."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(HANDOFF_SECONDS)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _dump(response: BaseModel) -> dict:
    """A response as the SDK writes it."""
    return response.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)


def _commands(updates: list[dict], wanted: bool = True) -> list[dict]:
    """The slash-command updates among `updates` (`wanted=False`: the others)."""
    return [u for u in updates if (u.get("sessionUpdate") == "available_commands_update") == wanted]


class Loads:
    """The agent's loads: each one's transcript kept for the next process, and a load the
    quick load answered taken over.

    `response` makes a session's `session/load` response; `sink` a handler of a session
    that sends nothing (a load made only to be kept); `plain` tells whether a fresh
    process's plain load opens a session as it is now."""

    def __init__(
        self,
        transcripts: Transcripts | None,
        response: Callable[[Session], BaseModel],
        sink: Callable[[str], AcpSessionHandler],
        plain: Callable[[Session], bool],
    ) -> None:
        self.transcripts = transcripts
        """None: the sessions here are not loaded quickly (see `replays_of`)."""
        self._response = response
        self._sink = sink
        self._plain = plain

    async def load(self, session: Session, keep: bool) -> BaseModel:
        """Redraw the session as `session/load` does; its response. `keep`: keep what was
        sent as the session's transcript (a plain load of a session not open before)."""
        key = self.transcripts.key(session.record) if keep and self.transcripts else None
        sent = await self._redraw(session)
        response = self._response(session)
        self._keep(session, key, sent, _dump(response))
        return response

    def _keep(self, session: Session, key: str | None, sent: list[dict], result: dict) -> None:
        """Keep what a load sent, made from the inputs `key` names, if nothing changed
        them meanwhile (a turn that began at once, a mode switched)."""
        if self.transcripts is not None and key and key == self.transcripts.key(session.record):
            self.transcripts.save(session.id, key, sent, result)

    async def _redraw(self, session: Session) -> list[dict]:
        """Send the conversation so far, then the session-start events, as a load does;
        the updates sent."""
        handler = cast("AcpSessionHandler", session.handler)
        handler.recording = []
        try:
            for event in await session.history():
                await handler.emit(event)
            await session.announce()  # before the response: nothing may follow a load's
            return handler.recording
        finally:
            handler.recording = None

    async def adopt(
        self, quick: QuickLoad, open_session: Callable[[SessionRecord], Session]
    ) -> None:
        """Take over a `session/load` answered from its transcript (by `answer_load`):
        open the session, run the load without sending it and send what differs (the
        slash commands, the modes and options); keep the new transcript."""
        try:
            session = open_session(quick.record)
            handler = cast("AcpSessionHandler", session.handler)
            key = self.transcripts.key(quick.record) if self.transcripts else None
            handler.muted = True
            try:
                sent = await self._redraw(session)
            finally:
                handler.muted = False
            result = _dump(self._response(session))
        except Exception:  # the client has its answer; the next request opens it again
            log.exception("could not take over the load of session %s", quick.record.id)
            return
        if sent == quick.updates and result == quick.result:
            return
        log.info("session %s was loaded from a stale transcript: corrected", quick.record.id)
        if result != quick.result:
            await handler.emit(ModeChanged(session.record.mode))  # the mode and the options
        if _commands(sent) != _commands(quick.updates):
            await handler.emit(CommandsChanged(await session.commands()))
        if _commands(sent, False) != _commands(quick.updates, False):
            log.warning("session %s was redrawn from a stale transcript", quick.record.id)
        self._keep(session, key, sent, result)

    async def kept_at_close(self, sessions: list[Session]) -> None:
        """Keep what a load of each closed session would send, for the next process, when
        its saved replay is current (so it is read without the harness)."""
        transcripts = self.transcripts
        if transcripts is None:
            return
        for session in sessions:
            record = session.record
            replay = transcripts.replays.key(record.thread_id, (record.cwd,))
            if (
                not self._plain(session)
                or not transcripts.replays.is_saved(record.id, replay)
                or transcripts.is_current(record)
            ):
                continue
            key = transcripts.key(record)
            sink = self._sink(record.id)
            sink.recording, sink.muted = [], True
            try:
                for event in [*await session.history(), *await session.opening()]:
                    await sink.emit(event)
                result = _dump(self._response(session))
            except Exception:  # the next load reads it the usual way
                log.debug("no load transcript kept for session %s", record.id, exc_info=True)
                continue
            self._keep(session, key, sink.recording, result)
