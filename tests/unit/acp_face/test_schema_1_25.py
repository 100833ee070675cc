"""The ACP 1.25 schema check the wire tests run (tests/support/acp_schema.py) can fail."""

from __future__ import annotations

import pytest

from tests.support import acp_schema
from tests.support.acp import Wire

CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def update(payload: dict) -> dict:
    params = {"sessionId": "s1", "update": payload}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def test_a_well_formed_update_and_response_pass() -> None:
    acp_schema.require()
    acp_schema.check(update({**CHUNK, "messageId": "m1"}))
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    acp_schema.check(answer, method="session/prompt")


@pytest.mark.parametrize(
    "payload",
    [
        {"sessionUpdate": "agent_message_chunk"},  # no content
        {**CHUNK, "messageId": 7},  # an id is a string
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "x", "name": 3},
        {"sessionUpdate": "no_such_update"},
    ],
)
def test_a_malformed_session_update_is_refused(payload: dict) -> None:
    acp_schema.require()
    with pytest.raises(acp_schema.SchemaViolation, match="SessionNotification"):
        acp_schema.check(update(payload))


def test_the_wire_check_refuses_what_the_python_sdk_lets_through() -> None:
    """`messageId: 7` passes the Python SDK 0.12.1's models (they quietly make a bad id
    None), so only the 1.25 check catches it."""
    acp_schema.require()
    wire = Wire()
    wire.incoming.append(update({**CHUNK, "messageId": 7}))
    with pytest.raises(acp_schema.SchemaViolation, match="messageId"):
        wire.validate()


def test_methods_only_the_unstable_schema_has_are_checked_against_it() -> None:
    acp_schema.require()
    with pytest.raises(acp_schema.SchemaViolation, match="ForkSessionResponse"):
        acp_schema.check({"jsonrpc": "2.0", "id": 1, "result": {}}, method="session/fork")
    acp_schema.check({"jsonrpc": "2.0", "id": 1, "result": {}}, method="_session/rewind")


def test_without_the_registry_the_check_is_skipped_saying_why(monkeypatch, tmp_path) -> None:
    def offline() -> bytes:
        raise OSError("no route to registry.npmjs.org")

    monkeypatch.setattr(acp_schema, "CACHE", tmp_path / "empty")
    monkeypatch.setattr(acp_schema, "_download", offline)
    acp_schema.schemas.cache_clear()
    try:
        assert "no route to registry.npmjs.org" in str(acp_schema.schemas())
        with pytest.raises(pytest.skip.Exception, match="could not be fetched"):
            acp_schema.require()
        with pytest.warns(UserWarning, match="not checked against ACP 1.25"):
            Wire().validate()
    finally:
        acp_schema.schemas.cache_clear()


def test_a_tarball_that_is_not_the_pinned_one_is_refused(monkeypatch) -> None:
    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def read(self) -> bytes:
            return b"not the package"

    monkeypatch.setattr(acp_schema.urllib.request, "urlopen", lambda *a, **k: Response())
    with pytest.raises(RuntimeError, match="not the pinned"):
        acp_schema._download()
