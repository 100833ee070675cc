"""`deepacp run`'s exit codes, one per kind of outcome a script may act on."""

from __future__ import annotations

from deepacp.errors import (
    DeepacpError,
    ProviderError,
    RemoteUnavailable,
    ServerUnavailable,
    TurnError,
)
from deepacp.events import StopReason

OK = 0
FAILED = 1
"""Something deepacp did not expect: the log has the traceback."""
USAGE = 2
"""A bad flag, prompt, file, session id or configuration (argparse's own code)."""
PROVIDER = 3
"""The model provider refused the key or the model, or could not be reached (the
`--server` or `--remote` machine too)."""
STOPPED_SHORT = 4
"""The model refused, ran out of output tokens, or `--max-turns` was reached."""
GOAL_NOT_MET = 5
"""With `--goal`: the grader did not find the goal met."""
CANCELLED = 130
"""Ctrl-C (SIGINT); SIGTERM and SIGHUP exit with 128 + the signal."""

TABLE = (
    (OK, "the turn ended normally"),
    (FAILED, "an unexpected failure (the log has the details)"),
    (USAGE, "a bad flag, prompt, --file, session id or configuration"),
    (
        PROVIDER,
        "the provider refused the key or model, or it (or --server, --remote) was not reached",
    ),
    (STOPPED_SHORT, "the model refused, hit max_tokens, or --max-turns was reached"),
    (GOAL_NOT_MET, "with --goal, the grader did not find the goal met"),
    (CANCELLED, "cancelled by Ctrl-C (SIGTERM, SIGHUP: 128 + the signal)"),
)
EPILOG = "exit codes:\n" + "".join(f"  {code:<3}  {meaning}\n" for code, meaning in TABLE)
"""The table as `deepacp run --help` shows it."""


def for_stop(stop: StopReason, goal_met: bool | None) -> int:
    """The exit code of a turn that ended with `stop` (`goal_met`: None without a goal)."""
    if stop == "cancelled":
        return CANCELLED
    if stop != "end_turn":
        return STOPPED_SHORT
    return GOAL_NOT_MET if goal_met is False else OK


def for_error(exc: BaseException) -> int:
    """The exit code of a run that failed with `exc`."""
    if isinstance(exc, ProviderError | TurnError | RemoteUnavailable | ServerUnavailable):
        return PROVIDER
    return USAGE if isinstance(exc, DeepacpError) else FAILED
