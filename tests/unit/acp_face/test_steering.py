"""The `_session/steering` wire shape: what a request may carry, what each outcome says."""

from __future__ import annotations

import pytest

from deepacp.acp.capabilities import initialize_result
from deepacp.acp.steering import SteeringParamsError, parse_steering, steering_response

TEXT = [{"type": "text", "text": "also add tests"}]


def test_a_request_and_its_idle_behaviour() -> None:
    plain = parse_steering({"sessionId": "s", "prompt": TEXT})
    assert plain.session_id == "s" and plain.prompt[0].text == "also add tests"
    assert plain.prompt_required is False
    meta = {"steering": {"idleBehavior": "promptRequired", "priority": "now"}}
    assert parse_steering({"sessionId": "s", "prompt": TEXT, "_meta": meta}).prompt_required


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ([], "must be an object"),
        ({"prompt": TEXT}, "sessionId"),
        ({"sessionId": "s", "prompt": []}, "non-empty prompt"),
        ({"sessionId": "s", "prompt": [{"type": "nonsense"}]}, "steering prompt"),
        (
            {"sessionId": "s", "prompt": TEXT, "_meta": {"steering": {"idleBehavior": "x"}}},
            "idleBehavior",
        ),
    ],
)
def test_bad_requests_say_what_is_wrong(params, says: str) -> None:
    with pytest.raises(SteeringParamsError, match=says):
        parse_steering(params)


def test_outcomes_and_the_capability() -> None:
    assert steering_response("injected") == {"outcome": "injected"}
    assert steering_response("promptRequired") == {
        "outcome": "promptRequired",
        "reason": "noRunningTurn",
    }
    result = initialize_result({"protocolVersion": 1})
    assert result["_meta"]["steering"] == {"supported": True}
