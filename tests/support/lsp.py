"""LSP wire helpers for tests that speak to `deepacp lsp`: byte by byte, or through
pytest-lsp's client (imported only by the tests that start one)."""

import os
import sys
import tempfile
from pathlib import Path
from typing import Any


def lsp_frame(body: bytes) -> bytes:
    """`body` framed as the base protocol frames a message (Content-Length header)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


HUNK_ACTIONS = (
    "deepacp: Accept this hunk",
    "deepacp: Reject hunk",
    "deepacp: Accept all in file",
    "deepacp: Accept proposal",
    "deepacp: Reject proposal",
    "deepacp: Show diff",
)
"""The code actions `deepacp lsp` offers on a proposed hunk, in every client."""


def modelless_lsp(prefix: str) -> tuple[str, Any]:
    """A home made now (named with `prefix`) and a pytest-lsp fixture `lsp`: `deepacp lsp`
    with that home and no model of its own, shut down after the test. A module binds the
    fixture as `lsp` for its tests to ask for."""
    import pytest_lsp
    from pytest_lsp import ClientServerConfig, LanguageClient

    home = tempfile.mkdtemp(prefix=prefix)
    config = ClientServerConfig(
        server_command=[str(Path(sys.executable).parent / "deepacp"), "lsp"],
        server_env={**os.environ, "DEEPACP_HOME": home, "DEEPACP_MODEL": ""},
    )

    @pytest_lsp.fixture(config=config)  # it reads the annotation: no `from __future__` here
    async def lsp(lsp_client: LanguageClient):
        yield
        await lsp_client.shutdown_session()

    return home, lsp


async def scripted_edit(client: Any, workspace: Path, script: Path, uri: str) -> dict:
    """Initialize `client`'s server on `workspace` with the scripted model of `script` and
    ask it to `deepacp.edit` `uri` ("go"): the command's result."""
    from lsprotocol import types as T

    await client.initialize_session(
        T.InitializeParams(
            capabilities=T.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            initialization_options={"model": f"scripted:{script}"},
        )
    )
    return await client.workspace_execute_command_async(
        T.ExecuteCommandParams("deepacp.edit", [{"uri": uri, "instruction": "go"}])
    )
