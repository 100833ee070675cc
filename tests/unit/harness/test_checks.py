"""The check commands a project's files point to."""

import json

import pytest

from deepacp.backends.filesystem import FilesystemBackend
from deepacp.harness.checks import project_checks


@pytest.mark.parametrize(
    ("files", "checks"),
    [
        ({}, []),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, []),
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, ["pytest"]),
        ({"conftest.py": ""}, ["pytest"]),
        ({"Cargo.toml": ""}, ["cargo test"]),
        ({"go.mod": "module x\n"}, ["go test ./..."]),
        ({"Makefile": "all:\n\ttrue\ntest:\n\tpytest\n"}, ["make test"]),
        ({"Makefile": "all:\n\ttrue\n"}, []),
        ({"package.json": json.dumps({"scripts": {"test": "vitest"}})}, ["npm test"]),
        (
            {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified"'}})},
            [],
        ),
        ({"package.json": "[" * 100_000}, []),  # nested past the JSON decoder's stack
        ({"AGENTS.md": "Run `make test` before you commit."}, ["make test"]),
        ({"AGENTS.md": "We like tabs."}, []),
    ],
)
async def test_checks_follow_from_the_files(tmp_path, files, checks):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert await project_checks(FilesystemBackend(str(tmp_path))) == checks
