"""A Python-regex search in a process of its own, so a pattern that backtracks can be
stopped (killed at a deadline) without freezing the server: reads one JSON request on
stdin (a tree to search, or texts), writes the matches as JSON on stdout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from deepacp.backends.pysearch import grep_texts_now, make_matcher, py_grep


def main() -> int:
    request = json.load(sys.stdin)
    pattern, ignore_case, limit = request["pattern"], request["ignore_case"], request["limit"]
    if "texts" in request:
        matcher = make_matcher(pattern, regex=True, ignore_case=ignore_case)
        found = grep_texts_now([tuple(item) for item in request["texts"]], matcher, limit)
    else:
        found = py_grep(
            Path(request["root"]),
            pattern,
            request["start"],
            request["glob"],
            regex=True,
            ignore_case=ignore_case,
            limit=limit,
            exclude=tuple(request["exclude"]),
        )
    json.dump([[m.path, m.line, m.text] for m in found], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
