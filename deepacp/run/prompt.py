"""The prompt `deepacp run` sends: the argument, or stdin (`-`, or a pipe when none is
given), and the files attached with `--file`, as resource content."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from deepacp.errors import ConfigError

STDIN = "-"


def prompt_text(argument: str | None, stdin: TextIO | None = None) -> str:
    """The prompt's text (a `ConfigError` when there is none)."""
    stdin = stdin or sys.stdin
    if argument is not None and argument != STDIN:
        text = argument
    elif argument == STDIN or not stdin.isatty():
        text = stdin.read()
        if not text.strip():
            raise ConfigError("the prompt on stdin is empty")
    else:
        raise ConfigError('no prompt: give one (deepacp run "fix the tests"), or pipe it in')
    return text


def attached(paths: list[str], cwd: Path) -> list[dict]:
    """Each `--file` as a text block holding its resource (a `ConfigError` naming the first
    that cannot be read as text)."""
    blocks = []
    for given in paths:
        path = (cwd / given).resolve()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"--file {given}: no such file") from None
        except IsADirectoryError:
            raise ConfigError(f"--file {given}: a directory, not a file") from None
        except UnicodeDecodeError:
            raise ConfigError(f"--file {given}: not a UTF-8 text file") from None
        except OSError as exc:
            raise ConfigError(f"--file {given}: {exc.strerror}") from None
        shown = path.relative_to(cwd).as_posix() if path.is_relative_to(cwd) else str(path)
        resource = f'<resource uri="{path.as_uri()}" path="{shown}">\n{text}\n</resource>'
        blocks.append({"type": "text", "text": resource})
    return blocks


def prompt_content(text: str, files: list[dict]) -> str | list[dict]:
    """What the session is sent: the text alone, or the text and the files after it."""
    return [{"type": "text", "text": text}, *files] if files else text
