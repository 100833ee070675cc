"""A Python-regex search in a process of its own, so a pattern that backtracks can be
stopped (killed at a deadline) without freezing the server: reads one JSON request on
stdin (a tree to search, or texts), writes the matches as JSON on stdout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from deepacp.backends.pysearch import GrepQuery, grep_texts_now, py_grep


def main() -> int:
    request = json.load(sys.stdin)
    query = GrepQuery(**request["query"])
    if "texts" in request:
        found = grep_texts_now([(path, text) for path, text in request["texts"]], query)
    else:
        found = py_grep(Path(request["root"]), query, tuple(request["exclude"]))
    json.dump([[m.path, m.line, m.text] for m in found], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
