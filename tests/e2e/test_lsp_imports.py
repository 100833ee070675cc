"""Importing `deepacp.lsp.runner` in a fresh interpreter loads none of the server side."""

from __future__ import annotations

import subprocess
import sys

from tests.unit.lsp_face.test_imports import SERVER_SIDE, lsp_graph


def test_the_runner_does_not_import_the_server() -> None:
    assert not lsp_graph()["deepacp.lsp.runner"] & SERVER_SIDE
    # And at run time, in a fresh interpreter: importing the runner loads none of them.
    probe = "import sys, deepacp.lsp.runner; print(sorted(m for m in sys.modules if 'lsp' in m))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert "deepacp.lsp.runner" in loaded
    assert not [m for m in SERVER_SIDE if repr(m) in loaded], loaded
