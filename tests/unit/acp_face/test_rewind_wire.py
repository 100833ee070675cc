"""The wire shapes of `_session/rewind` and `_session/edit_prompt`: bad params are one
readable line, and the RFD's field names are the ones read."""

from __future__ import annotations

import pytest
from acp.exceptions import RequestError

from deepacp.acp.rewind import EditPromptRequest, RewindRequest, parse


def test_the_rfd_field_names_are_read() -> None:
    request = parse(RewindRequest, {"sessionId": "s", "toMessageId": "m"})
    assert (request.session_id, request.to_message_id, request.on_conflict) == ("s", "m", "fail")
    edit = parse(
        EditPromptRequest,
        {"sessionId": "s", "messageId": "m", "content": [{"type": "text", "text": "t"}]},
    )
    assert edit.content[0].text == "t"


@pytest.mark.parametrize(
    ("model", "params", "message"),
    [
        (RewindRequest, {"sessionId": "s"}, "toMessageId: Field required"),
        (RewindRequest, {"sessionId": "s", "toMessageId": "m", "onConflict": "x"}, "onConflict"),
        (EditPromptRequest, {"sessionId": "s", "messageId": "m", "content": "hi"}, "content"),
    ],
)
def test_bad_params_are_one_line_invalid_params_errors(model, params, message) -> None:
    with pytest.raises(RequestError) as error:
        parse(model, params)
    assert error.value.code == -32602 and message in str(error.value)
    assert "\n" not in str(error.value)
