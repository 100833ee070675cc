"""Event -> ACP translation, checked against the SDK's schema types."""

import pytest
from acp import RequestError
from acp import schema as S

from deepacp.acp.capabilities import InitializeParamsError, initialize_result
from deepacp.acp.turn_result import turn_meta
from deepacp.acp.updates import (
    permission_answer,
    permission_tool_call,
    prompt_content,
    to_update,
)
from deepacp.events import FileDiff, Location, PermissionRequest, ToolFinished, ToolStarted
from deepacp.harness.usage import TokenUsage


def test_initialize_result_is_a_valid_response() -> None:
    result = S.InitializeResponse.model_validate(initialize_result({"protocolVersion": 1}))
    assert result.agent_capabilities.load_session is True
    assert result.agent_capabilities.prompt_capabilities.embedded_context is True
    assert result.agent_info.name == "deepacp"
    sessions = result.agent_capabilities.session_capabilities
    assert sessions.list is not None and sessions.resume is not None and sessions.delete is not None
    assert sessions.close is not None and sessions.additional_directories is not None
    [method] = result.auth_methods
    assert method.id == "model-api-key" and method.vars[0].name == "ANTHROPIC_API_KEY"
    assert result.agent_capabilities.auth.logout is not None
    terminal = initialize_result(
        {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": True}}}
    )
    setup, _ = S.InitializeResponse.model_validate(terminal).auth_methods
    assert isinstance(setup, S.TerminalAuthMethod) and setup.args == ["setup"]
    for bad in [
        None,
        {},
        {"protocolVersion": "1"},
        {"protocolVersion": True},
        {"protocolVersion": -1},
    ]:
        with pytest.raises(InitializeParamsError):
            initialize_result(bad)


def test_tool_cards() -> None:
    start = to_update(
        ToolStarted(
            "c1", "edit_file", "edit", "Edit a.py", {"file_path": "a.py"}, (Location("/w/a.py"),)
        )
    )
    assert isinstance(start, S.ToolCallStart) and start.status == "pending"
    assert start.raw_input == {"file_path": "a.py"} and start.locations[0].path == "/w/a.py"
    done = to_update(
        ToolFinished(
            "c1",
            "completed",
            "Edited",
            FileDiff("/w/a.py", "a\n", "b\n"),
            (Location("/w/a.py", 1),),
        )
    )
    diff = done.content[0]
    assert isinstance(diff, S.FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == ("/w/a.py", "a\n", "b\n")
    new_file = to_update(ToolFinished("c2", "completed", "", FileDiff("/w/n.py", None, "x")))
    assert new_file.content[0].old_text is None


def test_proposed_changes_on_pending_cards_and_permission_requests() -> None:
    diff = FileDiff("/w/a.py", "a\n", "b\n")
    start = to_update(ToolStarted("c1", "edit_file", "edit", "Edit a.py", {}, diff=diff))
    [content] = start.content
    assert (content.type, content.old_text, content.new_text) == ("diff", "a\n", "b\n")
    deletion = FileDiff("/w/a.py", "a\n", None)
    request = PermissionRequest(
        "c1", "Delete a.py", ("allow_once",), "delete", deletion, (Location("/w/a.py"),)
    )
    call = permission_tool_call(request)
    assert call.kind == "delete" and call.locations[0].path == "/w/a.py"
    [content] = call.content  # a deletion is a diff to nothing (newText is required)
    assert (content.old_text, content.new_text) == ("a\n", "")
    assert permission_tool_call(PermissionRequest("c2", "ls", ("allow_once",))).content is None
    assert to_update(ToolStarted("c3", "execute", "execute", "ls", {})).content is None


def test_turn_usage_goes_in_meta() -> None:
    assert turn_meta(TokenUsage()) is None
    assert turn_meta(TokenUsage(), "m1") == {"deepacp": {"messageId": "m1"}}
    meta = turn_meta(
        TokenUsage(input=30, cache_read=20, cache_write=5, output=4, reasoning=1, calls=2)
    )
    assert meta == {
        "deepacp": {
            "usage": {
                "inputTokens": 30,
                "outputTokens": 4,
                "totalTokens": 34,
                "thoughtTokens": 1,
                "cachedReadTokens": 20,
                "cachedWriteTokens": 5,
            }
        }
    }
    S.PromptResponse(stop_reason="end_turn", field_meta=meta)
    S.Usage.model_validate(meta["deepacp"]["usage"])  # the unstable schema's own shape


def test_permission_answers() -> None:
    request = PermissionRequest("c1", "Edit a.py", ("allow_once", "reject_once"))
    chosen = S.RequestPermissionResponse(
        outcome=S.AllowedOutcome(outcome="selected", option_id="reject_once")
    )
    assert permission_answer(chosen, request) == "reject_once"
    cancelled = S.RequestPermissionResponse(outcome=S.DeniedOutcome(outcome="cancelled"))
    assert permission_answer(cancelled, request) is None
    unknown = S.RequestPermissionResponse(
        outcome=S.AllowedOutcome(outcome="selected", option_id="allow_always")
    )
    assert permission_answer(unknown, request) is None  # an option we did not offer


def test_prompt_content_keeps_uris_and_text() -> None:
    blocks = [
        S.TextContentBlock(type="text", text="see"),
        S.ResourceContentBlock(type="resource_link", uri="file:///w/src/a%20b.py", name="a b.py"),
        S.EmbeddedResourceContentBlock(
            type="resource", resource=S.TextResourceContents(uri="file:///w/n.md", text="body")
        ),
    ]
    content = prompt_content(blocks, "/w")
    assert content[0] == {"type": "text", "text": "see"}
    assert (
        'uri="file:///w/src/a%20b.py"' in content[1]["text"]
        and 'path="src/a b.py"' in content[1]["text"]
    )
    assert content[2]["text"] == '<resource uri="file:///w/n.md" path="n.md">\nbody\n</resource>'
    with pytest.raises(RequestError):
        prompt_content([S.AudioContentBlock(type="audio", data="x", mime_type="audio/wav")], "/w")
