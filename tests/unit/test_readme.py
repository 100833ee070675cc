"""The README's Quick start is what CI runs: the two commands cannot drift."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[0].endswith("deepacp demo")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert quick_start_commands()[1] in ci.splitlines()


def test_development_gives_the_fast_tier_as_one_marker_command() -> None:
    """The fast tier is the whole suite minus the markers the tiers set, so a new test is in
    it unless its folder or its mark says it starts a process or a service."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Development", 1)[1].split("\n## ", 1)[0]
    [command] = re.findall(r"```sh\n(.+?)\n```", section)
    assert command == '.venv/bin/python -m pytest -m "not e2e and not services"'
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"e2e: ' in pyproject and '"services: ' in pyproject
    assert "-n auto --dist loadgroup" in pyproject  # the test command runs in parallel
