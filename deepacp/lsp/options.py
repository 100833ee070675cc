"""What the client says at initialize: our options and its workspace folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import attrs
from lsprotocol import types as T
from pygls import uris
from pygls.protocol import default_converter

_CONVERTER = default_converter()


@attrs.define
class LspOptions:
    """initializationOptions. Unknown keys are reported, not silently dropped."""

    model: str | None = None
    shell: Literal["ask", "allow", "deny"] = "ask"
    review: Literal["auto", "diagnostics", "annotated", "lens"] = "auto"


def read_options(raw: Any) -> tuple[LspOptions, list[str]]:
    """The options from `initializationOptions`, and a line for each problem with them.
    Options that do not fit their types are all dropped (the defaults stand); unknown
    keys are ignored."""
    if not isinstance(raw, dict):
        return LspOptions(), []
    known = {f.name for f in attrs.fields(LspOptions)}
    problems = []
    try:
        options = _CONVERTER.structure({k: v for k, v in raw.items() if k in known}, LspOptions)
    except Exception as exc:  # cattrs reports a bad value as one of several error types
        problems.append(f"bad initializationOptions: {exc}")
        options = LspOptions()
    if unknown := sorted(str(k) for k in set(raw) - known):
        problems.append(f"unknown initializationOptions: {', '.join(unknown)}")
    return options, problems


def workspace_roots(params: T.InitializeParams) -> list[Path]:
    """The workspace folders, else the root URI; none when the client names neither."""
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    return [Path(path) for uri in folders if (path := uris.to_fs_path(uri))]
