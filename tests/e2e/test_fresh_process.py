"""deepacp in a fresh Python process: what a start imports before it answers, and what it
tells a Python too old for it. Each test runs `python` (this venv's) on a probe, so the
modules the test process already holds cannot hide an import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deepacp.deferred_inits import DEFERRED

ROOT = Path(__file__).resolve().parents[2]

OLD_PYTHON = r"""
import runpy, sys

# Python 3.10 as far as deepacp can see: its version, and none of what 3.11 added to the
# standard library (tomllib), so a module that needs it fails as it would there.
sys.version_info = (3, 10, 14, "final", 0)


class Python310Stdlib:
    def find_spec(self, name, path=None, target=None):
        if name == "tomllib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Python310Stdlib())
sys.argv = ["deepacp", *sys.argv[1:]]
runpy.run_module("deepacp", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("args", [["--version"], ["--stdio"], ["doctor"]])
def test_an_older_python_is_told_in_one_line(tmp_path: Path, args: list[str]) -> None:
    """`python3.10 -m deepacp` from a source tree, where pip never had a say."""
    script = tmp_path / "python310.py"
    script.write_text(OLD_PYTHON)
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"deepacp needs Python 3.11 or newer; this is Python 3.10.14 ({sys.executable})\n"
    )


INITIALIZE_IMPORTS = """
import json, sys
from deepacp.acp.capabilities import initialize_result
result = initialize_result({"protocolVersion": 1, "clientCapabilities": {}})
print(json.dumps({"mcp": result["agentCapabilities"]["mcpCapabilities"],
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in
                                   ("mcp", "langchain_mcp_adapters"))}))
"""


def test_initialize_offers_remote_mcp_without_importing_it() -> None:
    """`deepacp --stdio` answers `initialize` from what the server module imports: MCP
    is said to work over http and sse, and nothing of it is loaded to say so."""
    done = subprocess.run(
        [sys.executable, "-c", INITIALIZE_IMPORTS], capture_output=True, text=True, check=True
    )
    answer = json.loads(done.stdout)
    assert answer == {"mcp": {"http": True, "sse": True}, "loaded": []}


def test_the_way_to_the_first_answer_imports_no_asyncio() -> None:
    """What `deepacp --stdio` imports before it answers (the command line, the server, the
    options): asyncio alone took a third of the time to the answer; the SDK and pydantic
    far more."""
    probe = (
        "import sys\n"
        "from deepacp.cli import build_parser, server_options\n"
        "from deepacp.acp.server import serve\n"
        "server_options(build_parser().parse_args(['--stdio']))\n"
        "print(sorted(m for m in ('asyncio', 'acp', 'pydantic', 'logging.handlers')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_public_apis_load_nothing_until_a_name_is_used() -> None:
    watched = ("deepacp.harness", "deepacp.session", "langchain", "langgraph")
    code = (
        "import sys, deepacp.harness, deepacp.session\n"
        f"print(*sorted(m for m in sys.modules if m.startswith({watched!r})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == ["deepacp.harness", "deepacp.session"]


PROBE = """
import json, sys
import deepacp
from deepacp.session import import_harness
import_harness()
before = sorted(set(sys.modules) & {"langsmith.types.run", "langgraph_sdk.client"})
from langsmith.types import Run
import langgraph_sdk
client = langgraph_sdk.get_client
print(json.dumps({"before": before, "run": Run.__module__, "client": client.__module__}))
"""


def test_the_harness_import_leaves_the_two_inits_until_used() -> None:
    """The measured win (a third of the harness import's CPU), and both packages whole
    for whoever uses them afterwards."""
    assert {"langsmith.types", "langgraph_sdk"} == DEFERRED
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["before"] == [] and seen["run"] == "langsmith.types.run"
    assert seen["client"].startswith("langgraph_sdk.")
