"""Glob patterns over `/`-separated paths, matched in time linear in pattern × path.

`*` and `?` stay within one segment, `**` as a whole segment spans any number of segments
(zero included, so `x/**` covers `x` itself), `[...]` is a character class and `{a,b}` an
alternation. `**` inside a segment (`a**b`) is a plain `*`, as in git and ripgrep.

Patterns come from the model, so no pattern may compile to a regex that backtracks without
bound: a pattern whose every segment has at most one `*` and that has at most one `**`
becomes one regex (each `/` can be consumed by one place only, so backtracking is bounded
by the number of segments); anything else is matched segment by segment, with the classic
greedy wildcard algorithm at both levels (stars over segments, stars within a segment).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_ALTERNATIVES = 256

Segment = Callable[[str], object]
"""Whether a segment (or a character) matches: anything truthy is a match."""


class GlobError(ValueError):
    """A glob pattern that cannot be used (too many alternatives)."""


def expand_braces(pattern: str) -> list[str]:
    """`a{b,c}d` -> [`abd`, `acd`], nested braces included; an unclosed `{` is literal."""
    start = pattern.find("{")
    while start != -1:
        depth, i, commas = 0, start, []
        while i < len(pattern):
            if pattern[i] == "{":
                depth += 1
            elif pattern[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif pattern[i] == "," and depth == 1:
                commas.append(i)
            i += 1
        if i < len(pattern) and commas:
            bounds = [start, *commas, i]
            head, tail = pattern[:start], pattern[i + 1 :]
            options = [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
            out: list[str] = []
            for option in options:
                for rest in expand_braces(option + tail):
                    out.append(head + rest)
                    if len(out) > MAX_ALTERNATIVES:
                        raise GlobError(
                            f"glob pattern {pattern[:80]!r} has more than {MAX_ALTERNATIVES} "
                            "{…} alternatives; use a simpler pattern"
                        )
            return out
        start = pattern.find("{", start + 1)
    return [pattern]


def _tokens(segment: str) -> list[str]:
    """A segment as tokens: `*`, `?`, `[class]`, or one literal character."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            if not out or out[-1] != "*":  # runs of stars are one star
                out.append("*")
        elif ch == "[":
            first = i + 2 if segment[i + 1 : i + 2] in ("!", "^") else i + 1
            end = segment.find("]", first + 1 if segment[first : first + 1] == "]" else first)
            if end == -1:
                out.append("[")
            else:
                out.append(segment[i : end + 1])
                i = end
        else:
            out.append(ch)
        i += 1
    return out


def _regex(token: str) -> str:
    if token == "*":
        return "[^/]*"
    if token == "?":
        return "[^/]"
    if len(token) > 1 and token.startswith("["):
        body = token[1:-1]
        if body[:1] in ("!", "^"):
            return "[^/" + body[1:].replace("\\", "\\\\") + "]"
        return "[" + body.replace("\\", "\\\\") + "]"
    return re.escape(token)


def _no_more(part: str) -> bool:
    return False


def _anything(part: str) -> bool:
    return True


def greedy_match(matchers: Sequence[Segment | None], parts: Sequence[str]) -> bool:
    """Greedy wildcard matching with single backtracking to the last star (a None matcher,
    which takes any run of parts): O(len(parts) × len(matchers)). Serves both levels: the
    characters of a segment, and the segments of a path (`**` being the star)."""
    t = p = 0
    star, mark = -1, 0
    while p < len(parts):
        here = matchers[t] if t < len(matchers) else _no_more
        if here is None:
            star, mark, t = t, p, t + 1
        elif here(parts[p]):
            t, p = t + 1, p + 1
        elif star != -1:
            mark += 1
            t, p = star + 1, mark
        else:
            return False
    return all(m is None for m in matchers[t:])


def _character(token: str) -> Segment | None:
    """The matcher of one segment token for `greedy_match` (None for `*`)."""
    if token == "*":
        return None
    if token == "?":
        return _anything
    if len(token) > 1:
        return re.compile(_regex(token)).fullmatch
    return token.__eq__


def _segment(segment: str) -> Segment:
    tokens = _tokens(segment)
    if tokens.count("*") <= 1:
        return re.compile("".join(map(_regex, tokens)) + r"\Z").match
    return functools.partial(greedy_match, [_character(t) for t in tokens])


GLOBSTAR = "**"


@dataclass(frozen=True)
class _Alternative:
    segments: tuple[str, ...]
    matchers: tuple[Segment | None, ...]  # None: `**`

    def match(self, path: str) -> bool:
        return greedy_match(self.matchers, path.split("/"))


def _one_regex(segments: tuple[str, ...]) -> str | None:
    """The whole alternative as one bounded regex, or None when it would not be bounded."""
    if segments.count(GLOBSTAR) > 1 or any(_tokens(s).count("*") > 1 for s in segments):
        return None
    out = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == GLOBSTAR:
            if last:
                out.append("(?:/.*)?" if i else ".*")  # `x/**` covers `x` itself
            else:
                out.append("(?:[^/]*/)*")
            continue
        body = "".join(map(_regex, _tokens(segment)))
        before_trailing_star = i == len(segments) - 2 and segments[-1] == GLOBSTAR
        out.append(body if last or before_trailing_star else body + "/")
    return "".join(out)


@dataclass(frozen=True)
class Glob:
    pattern: str
    alternatives: tuple[_Alternative, ...]
    regex: re.Pattern[str] | None  # all alternatives as one bounded regex, when possible

    def match(self, path: str) -> bool:
        if self.regex is not None:
            return self.regex.match(path) is not None
        return any(a.match(path) for a in self.alternatives)

    @property
    def matcher(self) -> Callable[[str], object]:
        """`match` as the quickest callable (truthy for a match), for filtering many paths."""
        return self.regex.match if self.regex is not None else self.match


@functools.lru_cache(maxsize=512)
def compile_glob(pattern: str) -> Glob:
    """The matcher for `pattern` (raises `GlobError` for a pattern it cannot use)."""
    alternatives = []
    regexes: list[str | None] = []
    for expanded in expand_braces(pattern):
        segments = tuple(
            GLOBSTAR if s == GLOBSTAR else s.replace(GLOBSTAR, "*") for s in expanded.split("/")
        )
        matchers = tuple(None if s == GLOBSTAR else _segment(s) for s in segments)
        alternatives.append(_Alternative(segments, matchers))
        regexes.append(_one_regex(segments))
    bounded = [r for r in regexes if r is not None]
    regex = None
    if len(bounded) == len(regexes):
        regex = re.compile("(?:" + "|".join(bounded) + r")\Z")
    return Glob(pattern, tuple(alternatives), regex)


def glob_matches(pattern: str, relative_path: str) -> bool:
    """Match a path (relative to the search start) against a glob pattern."""
    return compile_glob(pattern).match(relative_path)


def filter_matches(glob: str, relative_path: str) -> bool:
    """grep's file filter: a pattern without `/` matches the file name at any depth."""
    if "/" in glob:
        return glob_matches(glob, relative_path)
    return glob_matches(glob, relative_path.rsplit("/", 1)[-1])
