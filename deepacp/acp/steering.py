"""The `_session/steering` extension, as claude-agent-acp and codex-acp speak it.

Advertised as `_meta.steering.supported: true` in the `initialize` result. The request
`{sessionId, prompt: ContentBlock[], _meta?: {steering: {idleBehavior: "promptRequired"}}}`
adds the message to the running turn at its next model call and answers
`{outcome: "injected"}`. With no turn running the message starts one
(`{outcome: "startedNewTurn"}`), unless the client asked for `promptRequired`: then it is
left to the client to send as a `session/prompt` (`{outcome: "promptRequired", reason:
"noRunningTurn"}`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from acp import schema as S
from pydantic import TypeAdapter, ValidationError

METHOD = "session/steering"
"""The method as the SDK hands extension methods to the agent (without the leading `_`)."""
Outcome = Literal["injected", "startedNewTurn", "promptRequired"]
_BLOCKS = TypeAdapter(
    list[
        S.TextContentBlock
        | S.ImageContentBlock
        | S.AudioContentBlock
        | S.ResourceContentBlock
        | S.EmbeddedResourceContentBlock
    ]
)


class SteeringParamsError(ValueError):
    """The request is not a steering request (the message says what is wrong)."""


@dataclass(frozen=True)
class SteeringRequest:
    session_id: str
    prompt: list[Any]
    prompt_required: bool
    """With no turn running, leave the message to the client (`promptRequired`)."""


def parse_steering(params: Any) -> SteeringRequest:
    if not isinstance(params, dict):
        raise SteeringParamsError("steering params must be an object")
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise SteeringParamsError("steering needs a sessionId")
    raw = params.get("prompt")
    if not isinstance(raw, list) or not raw:
        raise SteeringParamsError("steering needs a non-empty prompt (content blocks)")
    try:
        prompt = _BLOCKS.validate_python(raw)
    except ValidationError as exc:
        raise SteeringParamsError(f"steering prompt: {exc.errors()[0]['msg']}") from None
    meta = params.get("_meta")
    options = meta.get("steering") if isinstance(meta, dict) else None
    idle = options.get("idleBehavior") if isinstance(options, dict) else None
    if idle not in (None, "promptRequired"):
        raise SteeringParamsError(f"unsupported steering idleBehavior {idle!r}")
    return SteeringRequest(session_id, prompt, idle == "promptRequired")


def steering_response(outcome: Outcome) -> dict[str, Any]:
    if outcome == "promptRequired":
        return {"outcome": outcome, "reason": "noRunningTurn"}
    return {"outcome": outcome}
