"""Cheaper pydantic models for the server process.

Most of the time between `initialize` and the first answer was pydantic defining models:
the ACP schema's ~280 and LangSmith's, most of which this process never uses. Two changes,
made before the SDK and the harness are imported:

- every model builds its validator and serializer on first use (`defer_build`), not when
  its class is defined;
- the ACP schema's field docstrings are not read from its source (they only become field
  descriptions in a JSON schema, and nothing here makes one of the protocol's models).
  Only while `acp.schema` is imported: the descriptions of a tool's arguments, which the
  model reads, are left alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def defer_model_builds() -> None:
    """Models defined from now on build their validators when first used."""
    import pydantic

    pydantic.BaseModel.model_config["defer_build"] = True


@contextlib.contextmanager
def _without_field_docstrings() -> Iterator[None]:
    try:
        from pydantic._internal import _fields
    except ImportError:  # another pydantic: read them, as usual
        yield
        return
    original = getattr(_fields, "_update_fields_from_docstrings", None)
    if original is None:
        yield
        return

    def skip(*_: Any, **__: Any) -> None:
        return None

    _fields._update_fields_from_docstrings = skip
    try:
        yield
    finally:
        _fields._update_fields_from_docstrings = original


def import_acp_schema() -> None:
    """Import the ACP SDK's schema the cheap way; call it before any other thread defines
    pydantic models (the docstring reader is switched off process-wide meanwhile)."""
    defer_model_builds()
    with _without_field_docstrings():
        import acp.schema  # noqa: F401
