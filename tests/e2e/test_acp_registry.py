"""Ready for the ACP Registry: the entry in editors/registry/ follows the registry's rules
(its agent.schema.json and CONTRIBUTING, encoded here so nothing is fetched at test time),
`initialize` passes the auth check the registry's CI runs, and `uvx --from <built wheel>
deepacp --stdio` works on a machine that has nothing but uv."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlparse

import pytest

from deepacp._version import __version__
from tests.providers.anthropic_server import AnthropicServer

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "editors" / "registry"
BIN = Path(sys.executable).parent
DEEPACP = str(BIN / "deepacp")
PLAIN_COLORS = {"currentcolor", "none", "inherit"}
NETWORK_TROUBLE = re.compile(
    r"failed to fetch|error sending request|dns error|could not connect|connection refused"
    r"|network is unreachable|timed out",
    re.IGNORECASE,
)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    """A command to its end (before any server of the test starts, so blocking is fine)."""
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def entry() -> tuple[Path, dict]:
    [folder] = [p for p in REGISTRY.iterdir() if p.is_dir()]
    return folder, json.loads((folder / "agent.json").read_text())


def strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def test_the_entry_follows_the_registry_schema_and_rules() -> None:
    folder, agent = entry()
    assert {"id", "name", "version", "description", "distribution"} <= set(agent)
    assert re.fullmatch(r"[a-z][a-z0-9-]*", agent["id"]) and agent["id"] == folder.name
    assert isinstance(agent["name"], str) and agent["name"]
    assert isinstance(agent["description"], str) and agent["description"]
    # Semantic version, every part numeric; ours is the package's.
    assert re.fullmatch(r"\d+\.\d+\.\d+", agent["version"]) and agent["version"] == __version__
    repository = urlparse(agent["repository"])
    assert repository.scheme == "https" and repository.netloc
    assert strings(agent["authors"]) and isinstance(agent["license"], str)
    assert "icon" not in agent or isinstance(agent["icon"], str)

    distribution = agent["distribution"]
    assert distribution and set(distribution) <= {"binary", "npx", "uvx"}
    uvx = distribution["uvx"]
    # A package distribution has only these fields (no `cmd`: uvx runs the package's own).
    assert set(uvx) <= {"package", "args", "env"} and uvx["package"]
    assert "args" not in uvx or strings(uvx["args"])
    env = uvx.get("env", {})
    assert isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
    # `uvx PACKAGE ARGS`: pinned to the entry's version (never latest), with extras we have.
    package = re.fullmatch(
        r"(?P<name>[a-z-]+)(\[(?P<extras>[a-z,]+)\])?==(?P<version>[\d.]+)", uvx["package"]
    )
    assert package and "@latest" not in uvx["package"]
    assert package["name"] == "deepacp" and package["version"] == agent["version"]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set((package["extras"] or "").split(",")) - {""} <= set(extras)


def test_the_icon_follows_the_registry_rules() -> None:
    folder, _ = entry()
    text = (folder / "icon.svg").read_text()
    icon = ET.fromstring(text)
    assert icon.tag.endswith("svg") and "<!--" not in text
    size = (icon.get("width"), icon.get("height"))
    if None in size:
        size = tuple(icon.get("viewBox", "").split()[2:4])
    assert size == ("16", "16")  # 16x16, so square
    colors = []
    for element in icon.iter():
        colors += [element.get(a) for a in ("fill", "stroke") if element.get(a)]
        style = element.get("style") or ""
        colors += re.findall(r"\b(?:fill|stroke)\s*:\s*([^;]+)", style)
    assert colors and {c.strip().lower() for c in colors} <= PLAIN_COLORS
    assert "currentcolor" in {c.strip().lower() for c in colors}  # monochrome, themeable


async def registry_initialize(command: list[str], home: Path) -> dict:
    """`initialize` as the registry's auth check sends it: a fresh HOME and nothing else in
    the environment, a client that can run terminal auth."""
    home.mkdir(exist_ok=True)
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={"HOME": str(home)},
        cwd=home,
    )
    params = {
        "protocolVersion": 1,
        "clientInfo": {"name": "registry check", "version": "1.0.0"},
        "clientCapabilities": {
            "terminal": True,
            "fs": {"readTextFile": True, "writeTextFile": True},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
    }
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(request).encode() + b"\n")
    await process.stdin.drain()
    reply = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
    process.stdin.close()
    await asyncio.wait_for(process.wait(), 30)
    return reply["result"]


async def test_initialize_passes_the_registry_auth_check(tmp_path: Path) -> None:
    _, agent = entry()
    result = await registry_initialize([DEEPACP, *agent["distribution"]["uvx"]["args"]], tmp_path)
    # A method without a type is an agent method; the registry wants agent or terminal.
    types = [m.get("type", "agent") for m in result["authMethods"]]
    assert {"agent", "terminal"} & set(types), types
    terminal = next(m for m in result["authMethods"] if m.get("type") == "terminal")
    # The client runs the entry's command plus these args, in a terminal, to sign in.
    assert terminal["args"] == ["setup"]
    command = [DEEPACP, *agent["distribution"]["uvx"]["args"], *terminal["args"]]
    key = "sk-ant-registry-check-0000"
    home = {"HOME": str(tmp_path), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    with AnthropicServer() as server:  # setup checks the key with one request
        server.keys = {key}
        signed_in = run(
            command,
            input=f"anthropic\n{key}\n",
            env={**home, "ANTHROPIC_BASE_URL": server.base_url},
            timeout=60,
        )
    assert signed_in.returncode == 0, signed_in.stdout + signed_in.stderr
    assert (tmp_path / ".deepacp" / "credentials.json").exists()


def uv_env(tmp_path: Path) -> dict[str, str]:
    """uv with nothing of ours: its own cache and tools folders, no Python downloads; the
    machine's network settings (proxies, trusted certificates, index mirrors) still apply."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    network = {
        k: v
        for k, v in os.environ.items()
        if k in ("SSL_CERT_FILE", "SSL_CERT_DIR")
        or k.lower().endswith("_proxy")
        or k.startswith("UV_")
    }
    return {
        **network,
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_PYTHON_DOWNLOADS": "never",
    }


@pytest.mark.network
@pytest.mark.slow(reason="builds the wheel; uvx downloads its dependencies from PyPI")
@pytest.mark.timeout(900)
async def test_uvx_runs_the_built_wheel(agent_factory, tmp_path: Path) -> None:
    """Downloads deepacp's dependencies from PyPI through uv (skipped when no index can be
    reached)."""
    uvx = shutil.which("uvx", path=str(BIN))
    assert uvx is not None, "uv is in the test extra"
    dist = tmp_path / "dist"
    # Built from a copy: an in-tree build would leave build/ behind, whose stale files a
    # later wheel would carry.
    source = tmp_path / "source"
    junk = shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "node_modules")
    shutil.copytree(ROOT, source, symlinks=True, ignore=junk)
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
        check=True,
        timeout=300,
    )
    [wheel] = dist.glob("deepacp-*.whl")
    env = uv_env(tmp_path)
    install = run([uvx, "--from", str(wheel), "deepacp", "--version"], env=env, timeout=800)
    if install.returncode != 0 and NETWORK_TROUBLE.search(install.stderr):
        pytest.skip(f"uv cannot reach a package index: {install.stderr.strip()[-300:]}")
    assert install.returncode == 0, install.stderr
    assert install.stdout.strip() == f"deepacp {__version__}"

    command = (uvx, "--from", str(wheel), "deepacp", "--stdio")
    turns = [{"content": "Hello from uvx."}]
    async with agent_factory(turns, command=command, env=env) as agent:
        assert agent.info.agent_info.version == __version__
        session = await agent.new_session()
        assert (await agent.prompt(session, "hi")).stop_reason == "end_turn"
        assert agent.client.text(session) == "Hello from uvx."
