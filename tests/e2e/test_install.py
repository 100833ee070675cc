"""Installing deepacp as a user does before the first release (the checkout, into a fresh
environment, with the README's own install line), and the sdist and wheel a release would
upload: built, checked as PyPI checks them, and their command run.

Both are slow (marked `slow`): the first downloads deepacp's dependencies (marked `network`:
skipped when no package index can be reached), the second builds in an isolated environment.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from deepacp._version import __version__
from tests.providers.anthropic_server import AnthropicServer
from tests.providers.wire import Reply

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NETWORK_TROUBLE = re.compile(
    r"Could not fetch|Failed to establish|Temporary failure in name resolution|Max retries"
    r"|No matching distribution found|connection refused|timed out",
    re.IGNORECASE,
)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientInfo": {"name": "install check", "version": "1"}},
}
WHERE = "import deepacp; print(deepacp.__file__)"
"""Run outside the checkout (`python -c` puts the working folder first on sys.path)."""


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def checkout(tmp_path: Path) -> Path:
    """The repository as a fresh clone has it (an in-tree build would leave build/ behind,
    and .venv and the like are not in a clone)."""
    source = tmp_path / "deepacp"
    junk = shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "node_modules")
    shutil.copytree(ROOT, source, symlinks=True, ignore=junk)
    return source


def readme_install_spec() -> str:
    """What the README tells a user to install from a clone: `pipx install SPEC`."""
    readme = (ROOT / "README.md").read_text()
    [line] = re.findall(r"^pipx install .+$", readme, re.MULTILINE)
    return shlex.split(line.split("#")[0])[-1]


def initialize(command: list[str], home: Path, **env: str) -> dict:
    """`initialize` as an editor sends it, with nothing of ours in the environment."""
    home.mkdir(exist_ok=True)
    done = run(
        command,
        input=json.dumps(INITIALIZE) + "\n",
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", **env},
        cwd=home,
        timeout=120,
    )
    assert done.stdout, done.stderr
    return json.loads(done.stdout.splitlines()[0])["result"]


@pytest.mark.slow(reason="a fresh venv and a pip install of the checkout, from the package index")
@pytest.mark.network
@pytest.mark.timeout(1500)
def test_the_readme_user_path_works_from_a_clone(tmp_path: Path) -> None:
    """The README's `pipx install` line, as pip in a fresh venv runs it (what pipx does):
    the checkout itself, not editable, with the README's extra and no other; then its
    `deepacp setup` and `deepacp run` (`follow_the_readme`)."""
    source = checkout(tmp_path)
    spec = readme_install_spec()
    assert spec.startswith(".[") and "mcp" not in spec  # the checkout, no MCP extra
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    install = run([python, "-m", "pip", "install", "-q", spec], cwd=source, timeout=1400)
    if install.returncode != 0 and NETWORK_TROUBLE.search(install.stderr):
        pytest.skip(f"pip cannot reach a package index: {install.stderr.strip()[-300:]}")
    assert install.returncode == 0, install.stderr[-3000:]
    shutil.rmtree(source)  # nothing may still come from the checkout

    deepacp = str(venv / "bin" / "deepacp")
    version = run([deepacp, "--version"], timeout=60)
    assert version.stdout.strip() == f"deepacp {__version__}", version.stderr
    where = run([python, "-c", WHERE], cwd=tmp_path, timeout=60)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr

    result = initialize([deepacp, "--stdio"], tmp_path / "home")
    assert result["agentInfo"]["version"] == __version__
    assert result["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": True}
    follow_the_readme(venv / "bin", tmp_path / "user")


def follow_the_readme(bin_dir: Path, home: Path) -> None:
    """What the README's user path does next, with that install alone on PATH: `deepacp
    setup` (Anthropic, against a local server that answers as the API does), then `deepacp
    run --output-format json` in a project, on the model setup chose."""
    home.mkdir()
    project = home / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    user = {
        "HOME": str(home),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    key = "sk-ant-readme-0123456789abcdef"
    with AnthropicServer([Reply(text="The notes say hello.")]) as server:
        server.keys = {key}
        env = {**user, "ANTHROPIC_BASE_URL": server.base_url}
        setup = run(["deepacp", "setup"], input=f"anthropic\n{key}\n", env=env, timeout=120)
        assert setup.returncode == 0, setup.stdout + setup.stderr
        assert "The key works" in setup.stdout and key not in setup.stdout + setup.stderr
        answered = run(
            ["deepacp", "run", "--output-format", "json", "what do the notes say?"],
            env=env,
            cwd=project,
            timeout=300,
        )
    assert answered.returncode == 0, answered.stdout + answered.stderr
    result = json.loads(answered.stdout)  # stdout holds the one object, nothing else
    assert result["answer"] == "The notes say hello." and result["stop_reason"] == "end_turn"
    assert result["error"] is None and len(result["session_id"]) == 32
    [asked] = server.model_requests("/v1/messages")
    presented = asked.headers.get("x-api-key") or asked.headers["authorization"].split()[-1]
    assert presented == key and asked.body["model"] == "claude-sonnet-4-5"


@pytest.mark.slow(reason="builds the sdist and the wheel and installs the wheel")
@pytest.mark.timeout(900)
def test_the_sdist_and_wheel_build_check_and_run(tmp_path: Path) -> None:
    """`python -m build` (the wheel built from the sdist, so the sdist is complete),
    `twine check --strict`, and the wheel's `deepacp` command run."""
    source, dist = checkout(tmp_path), tmp_path / "dist"
    built = run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], timeout=800)
    if built.returncode != 0 and NETWORK_TROUBLE.search(built.stdout + built.stderr):
        pytest.skip(f"build cannot reach a package index: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    [sdist] = dist.glob(f"deepacp-{__version__}.tar.gz")
    [wheel] = dist.glob(f"deepacp-{__version__}-py3-none-any.whl")

    checked = run([str(BIN / "twine"), "check", "--strict", str(sdist), str(wheel)], timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    top = f"deepacp-{__version__}"
    with tarfile.open(sdist) as archive:
        in_sdist = set(archive.getnames())
    assert {f"{top}/LICENSE", f"{top}/README.md", f"{top}/pyproject.toml"} <= in_sdist
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
        metadata = archive.read(f"{top}.dist-info/METADATA").decode()
    assert f"{top}.dist-info/licenses/LICENSE" in in_wheel
    assert {
        "deepacp/_editors/zed/settings.json",
        "deepacp/_editors/registry/deepacp/agent.json",
        "deepacp/examples/demo_project/stats.py",
    } <= in_wheel
    assert not [name for name in in_wheel if name.startswith(("tests/", "benchmarks/"))]
    assert "License-Expression: MIT" in metadata and "Requires-Python: >=3.11" in metadata
    assert "Requires-Dist: langchain-mcp-adapters" in metadata
    assert "Provides-Extra: mcp" not in metadata

    # The wheel's own console script, over this environment's dependencies.
    target = tmp_path / "unpacked"
    unpack = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    assert run([*unpack, str(wheel)], timeout=300).returncode == 0
    env = {"PYTHONPATH": str(target)}
    command = str(target / "bin" / "deepacp")
    version = run([command, "--version"], env=env, timeout=60)
    assert version.stdout.strip() == f"deepacp {__version__}", version.stderr
    where = run([sys.executable, "-c", WHERE], env=env, cwd=tmp_path, timeout=60)
    assert where.stdout.startswith(str(target)), where.stdout + where.stderr
    result = initialize([command, "--stdio"], tmp_path / "home", **env)
    assert result["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": True}
