"""JSON with comments, as editors read their settings."""

from __future__ import annotations

import json
import re


def jsonc(text: str) -> dict:
    """JSON with // and /* */ comments and trailing commas, as Zed and VS Code read it."""
    token = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
    text = token.sub(lambda m: m.group(1) or "", text)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))
