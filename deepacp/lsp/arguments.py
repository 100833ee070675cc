"""`deepacp.edit`'s arguments and target, checked before anything runs.

A request that cannot run is refused with one line in plain words (which field is
missing or wrong, which file is outside which workspace) before any model is called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls import uris

from deepacp.errors import DeepacpError

EDIT = "deepacp.edit"
FIELDS = ("uri", "instruction", "range")
RANGE_SHAPE = "{start: {line, character}, end: {line, character}} with whole numbers"


class BadRequest(DeepacpError):
    """An edit request that cannot run; the message says what to fix."""


@dataclass(frozen=True)
class EditArgs:
    uri: str
    instruction: str
    range: T.Range | None = None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _instruction(value: Any) -> str:
    if not isinstance(value, str):
        raise BadRequest(
            f"{EDIT}: 'instruction' must be text saying what to change, not {_kind(value)}"
        )
    if not value.strip():
        raise BadRequest(f"{EDIT}: the instruction is empty; say what to change")
    return value.strip()


def _position(value: Any) -> T.Position:
    if not isinstance(value, dict) or set(value) != {"line", "character"}:
        raise BadRequest(f"{EDIT}: 'range' must be {RANGE_SHAPE}")
    line, character = value["line"], value["character"]
    for number in (line, character):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise BadRequest(f"{EDIT}: 'range' must be {RANGE_SHAPE}")
    return T.Position(line, character)


def _range(value: Any) -> T.Range | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"start", "end"}:
        raise BadRequest(f"{EDIT}: 'range' must be {RANGE_SHAPE}")
    return T.Range(_position(value["start"]), _position(value["end"]))


def _from_object(data: dict) -> EditArgs:
    if unknown := sorted(str(k) for k in set(data) - set(FIELDS)):
        names = ", ".join(map(repr, unknown))
        raise BadRequest(f"{EDIT}: unknown field {names}; it takes uri, instruction, range")
    if "uri" not in data:
        raise BadRequest(f"{EDIT}: 'uri' is missing: the file:// URI of the file to change")
    if not isinstance(data["uri"], str):
        raise BadRequest(f"{EDIT}: 'uri' must be text (a file:// URI), not {_kind(data['uri'])}")
    if "instruction" not in data:
        raise BadRequest(f"{EDIT}: 'instruction' is missing: say what to change, as text")
    return EditArgs(data["uri"], _instruction(data["instruction"]), _range(data.get("range")))


def parse_edit_args(arguments: tuple[Any, ...], last_uri: str | None) -> EditArgs:
    """{uri, instruction, range?} from editor glue, or an instruction typed at a prompt
    (Helix: `:lsp-workspace-command deepacp.edit "make it async"`), which is about the
    document the user last worked in."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        return _from_object(arguments[0])
    if arguments and all(isinstance(a, str) for a in arguments):
        instruction = _instruction(" ".join(arguments))
        if last_uri is None:
            raise BadRequest(f"{EDIT}: open the file the instruction is about first")
        return EditArgs(last_uri, instruction)
    got = "no arguments" if not arguments else ", ".join(_kind(a) for a in arguments)
    raise BadRequest(
        f"{EDIT} takes {{uri, instruction, range?}} or an instruction as text; got {got}"
    )


def edit_target(uri: str, roots: list[Path], is_open: Callable[[Path], bool]) -> tuple[Path, Path]:
    """The file to edit and the workspace root it is in. Without workspace folders, the
    file's own folder is the workspace."""
    fs_path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    if not fs_path:
        raise BadRequest(f"{EDIT}: 'uri' must be a file:// URI; got {uri!r}")
    target = Path(fs_path)
    resolved = target.resolve()
    root = next((r for r in roots if resolved.is_relative_to(r.resolve())), None)
    if roots and root is None:
        where = " or ".join(str(r) for r in roots)
        raise BadRequest(
            f"{EDIT}: {target} is outside the workspace {where}; "
            "open it from its own project to edit it"
        )
    root = root or target.parent
    if target.is_dir():
        raise BadRequest(f"{EDIT}: {target} is a folder; name a file in the workspace {root}")
    if not target.is_file() and not is_open(target):
        raise BadRequest(
            f"{EDIT}: {target} does not exist and is not open in the editor (workspace {root})"
        )
    return target, root
