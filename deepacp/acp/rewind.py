"""The wire shapes of `_session/rewind` and `_session/edit_prompt`: the ACP draft RFD
"Session Rewind" (`toMessageId`; `messageId` and `content`), with deepacp's additions —
`onConflict`, and what happened to the files in the result's `_meta`."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from acp import schema as S
from acp.exceptions import RequestError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deepacp.session import Restored

OnConflict = Literal["fail", "restore", "keep"]
Model = TypeVar("Model", bound=BaseModel)


class RewindRequest(BaseModel):
    """Keep the conversation up to and including the turn of prompt `toMessageId`."""

    model_config = ConfigDict(populate_by_name=True)
    session_id: str = Field(alias="sessionId")
    to_message_id: str = Field(alias="toMessageId")
    on_conflict: OnConflict = Field("fail", alias="onConflict")
    """A file the user changed since: fail (nothing happens), restore it, or keep theirs."""


class EditPromptRequest(BaseModel):
    """Go back to before prompt `messageId` and run `content` in its place."""

    model_config = ConfigDict(populate_by_name=True)
    session_id: str = Field(alias="sessionId")
    message_id: str = Field(alias="messageId")
    content: list[
        S.TextContentBlock
        | S.ImageContentBlock
        | S.AudioContentBlock
        | S.ResourceContentBlock
        | S.EmbeddedResourceContentBlock
    ]
    on_conflict: OnConflict = Field("fail", alias="onConflict")


def parse(model: type[Model], params: dict[str, Any]) -> Model:
    """`params` as `model`, or an invalid-params error naming the first problem."""
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "params"
        raise RequestError(-32602, f"Invalid params: {where}: {error['msg']}") from None


def unknown_message(message_id: str, session_id: str) -> RequestError:
    return RequestError(
        -32002,
        f"Resource not found: no prompt {message_id!r} in session {session_id}",
        {"reason": "unknown_message_id"},
    )


def conflicts_error(files: list[str]) -> RequestError:
    return RequestError(
        -32000,
        f"Not rewound: you changed these files after the agent did: {', '.join(files)}; "
        'send onConflict "restore" to restore them anyway or "keep" to keep yours',
        {"reason": "conflicts", "files": files},
    )


def files_meta(done: Restored) -> dict[str, Any]:
    """What a rewind did to the files, for a result's `_meta`."""
    meta: dict[str, Any] = {
        "restored": done.restored,
        "keptYours": done.conflicts,
        "notRestored": sorted({*done.lost, *done.failed}),
    }
    if done.fork is not None:
        meta["forkSessionId"] = done.fork.id
    return {"deepacp": meta}
