"""The README's editor snippets are the ones shipped in editors/."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.jsonc import jsonc

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"


async def test_the_readme_zed_snippet_is_the_shipped_one() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = [jsonc(b) for b in re.findall(r"```json\n(.+?)\n```", readme, re.DOTALL)]
    shipped = jsonc((EDITORS / "zed" / "settings.json").read_text())
    assert shipped in blocks
