"""`session/load` answered before the ACP SDK is imported, from the load's transcript.

A session's transcript is what its last load sent (or, kept as the session closed, what a
load would send): the `session/update`s and the response, as JSON. When a fresh process's
first request after `initialize` is a plain `session/load` (no MCP servers, no additional
directories) of a session whose transcript is still current, the transcript is written out
as it is, with nothing but the standard library loaded; importing the SDK alone takes
longer than the whole answer.

Current means made from the same inputs: the thread's latest checkpoint (and the saved
replay of it), the session's record, the workspace root, config.toml, the `DEEPACP_*`
environment, the command-line options, the client's capabilities and the code that makes
a load (deepacp, the SDK, pydantic). Those are kept as a hash, not as they are. Once the
SDK is loaded, the agent runs the load the usual way without sending it and sends what
differs (`DeepacpAgent.adopt`), so an input this key misses is corrected a moment later.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepacp.acp.transport import StdioTransport
from deepacp.config import ServerOptions
from deepacp.private import write_private
from deepacp.session.replays import Replays
from deepacp.session.storage.records import SessionRecord, Store
from deepacp.session.storage.sqlite import SessionStore

log = logging.getLogger(__name__)

WAIT_SECONDS = 0.02
"""How long the server waits for a request after `initialize` before it imports the SDK
(a client that loads a session sends it at once; one that waits loses nothing but this)."""

_SESSION_ID = re.compile(r"[0-9a-f]{32}")
_PACKAGE = Path(__file__).resolve().parent.parent


def _stat(path: Path) -> str:
    try:
        info = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{info.st_mtime_ns}:{info.st_size}"


def _package_files(name: str, files: tuple[str, ...]) -> list[str]:
    """Stamps of some files of an installed package (found, not imported)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return [f"{name}:?"]
    if spec is None or spec.origin is None:
        return [f"{name}:?"]
    folder = Path(spec.origin).parent
    return [_stat(folder / file) for file in files]


def _code_stamp() -> list[str]:
    stamps = [_stat(path) for path in sorted(_PACKAGE.rglob("*.py"))]
    stamps += _package_files("acp", ("__init__.py", "schema.py", "helpers.py", "utils.py"))
    stamps += _package_files("pydantic", ("version.py",))
    return stamps


class Transcripts:
    """The load transcripts of the sessions under `home`, next to their saved replays."""

    def __init__(self, home: Path, options: ServerOptions, client_params: dict) -> None:
        self.home = home
        self.replays = Replays(home)
        self._inputs: list[Any] | None = None
        self._options = options
        self._client = client_params.get("clientCapabilities")

    def path(self, session_id: str) -> Path:
        return self.replays.load_path(session_id)

    def _keys(self, record: SessionRecord) -> tuple[dict[str, Any], str] | None:
        """The key of the replay a load of `record` draws, and the hash of everything the
        load is made from (None: nothing to keep)."""
        replay = self.replays.key(record.thread_id, (record.cwd,))
        if replay is None:
            return None
        if self._inputs is None:  # the same for every session of this process
            self._inputs = [
                _code_stamp(),
                _stat(self.home / "config.toml"),
                sorted((k, v) for k, v in os.environ.items() if k.startswith("DEEPACP_")),
                dataclasses.asdict(self._options),
                self._client,
            ]
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


async def answer_load(
    transport: StdioTransport, options: ServerOptions, client_params: dict, store: Store
) -> QuickLoad | None:
    """Answer the next request from its transcript if it is a `session/load` that can be
    (None: it is left for the agent, unread, as is anything that fails here)."""
    if options.server or options.remote or not isinstance(store, SessionStore):
        return None
    try:
        message = await transport.peek(WAIT_SECONDS)
    except TimeoutError:
        return None
    if message is None or (load := _plain_load(message)) is None:
        return None
    session_id, cwd = load
    try:
        record = store.get(session_id)
        if record is None or Path(cwd).resolve() != Path(record.cwd).resolve():
            return None
        kept = Transcripts(store.home, options, client_params).read(record)
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
