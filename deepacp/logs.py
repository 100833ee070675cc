"""Server logs: stderr (what the editor's log panel shows) and a rotating file under
`$DEEPACP_HOME/logs/` (what `deepacp doctor` points to), with secrets redacted. On a
terminal (`deepacp run`) stderr gets one line per record and no traceback: those stay in
the file."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

from deepacp.config import deepacp_home
from deepacp.private import private_dir, private_file
from deepacp.secrets import redact, secret_values

LOG_FILE = "deepacp.log"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
"""What DEEPACP_LOG_LEVEL may be: what the log file keeps (stderr: warnings and errors)."""
PROVIDER_CLIENTS = ("langchain_openai", "langchain_anthropic", "langchain_ollama")


def log_path() -> Path:
    return deepacp_home() / "logs" / LOG_FILE


class RedactSecrets(logging.Filter):
    """Replaces the values of secret-looking environment variables in every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if secrets := secret_values():
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            elif record.exc_text:
                message += "\n" + record.exc_text
            if record.stack_info:
                message += "\n" + record.stack_info
            # A handler before this one (an embedding app's, pytest's) may have formatted
            # the traceback already: that text is kept on the record and printed as it is.
            record.exc_info = record.exc_text = record.stack_info = None
            record.msg, record.args = redact(message, secrets), None
        return True


class TerminalLines(logging.Formatter):
    """A record as one line for a person at a terminal: its message's first line."""

    def format(self, record: logging.LogRecord) -> str:
        lines = record.getMessage().splitlines() or [""]
        return f"deepacp: {record.levelname.lower()}: {lines[0]}"


class WithoutTraceback(logging.Filter):
    """Keeps records that carry a traceback off the terminal (the file has them; the error
    they end in says where it is), and counts them; and the provider clients' own records."""

    def __init__(self) -> None:
        super().__init__()
        self.held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            self.held += 1
            return False
        # A provider client's own warning (langchain-openai's "stream_chunk_timeout fired")
        # is about a failure the user reads as deepacp's one line: the file has it.
        return not record.name.startswith(PROVIDER_CLIENTS)


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Each new log file (the first, and every one after a rollover) is 0600."""

    def _open(self):
        private_file(Path(self.baseFilename))
        return super()._open()


class FirstLine(logging.Formatter):
    """A record in one line; the rest of it (a traceback) is only in the log file."""

    def format(self, record: logging.LogRecord) -> str:
        first, _, more = super().format(record).partition("\n")
        return f"{first} (details in {log_path()})" if more.strip() else first


def configure(
    face: str, terminal: WithoutTraceback | None = None, *, one_line: bool = False
) -> Path | None:
    """Log to stderr and to the rotating file; returns the file's path (None if unwritable).
    With `terminal`, stderr is a person's terminal: one line a record, tracebacks held back
    by `terminal` (which counts them). `one_line`: each record in one line on stderr (an
    editor's log panel)."""
    wanted = (os.environ.get("DEEPACP_LOG_LEVEL") or "INFO").strip().upper()
    level = wanted if wanted in LEVELS else "INFO"
    root = logging.getLogger()
    root.setLevel(level)
    redactor = RedactSecrets()
    layout = f"%(asctime)s {face} %(levelname)s %(name)s: %(message)s"
    form = logging.Formatter(layout)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(max(logging.WARNING, logging.getLevelName(level)))
    if terminal is not None:
        stderr.addFilter(terminal)  # before the redactor, which folds the traceback in
    handlers: list[logging.Handler] = [stderr]
    path: Path | None = log_path()
    try:
        handlers.append(_file_handler(log_path()))
    except OSError:
        path = None
    for handler in handlers:
        handler.setFormatter(form)
        handler.addFilter(redactor)
        root.addHandler(handler)
    if terminal is not None:
        stderr.setFormatter(TerminalLines())
    elif one_line:
        stderr.setFormatter(FirstLine(layout))
    if wanted != level:
        logging.getLogger("deepacp").warning(
            "DEEPACP_LOG_LEVEL=%s is not one of %s; logging at INFO", wanted, ", ".join(LEVELS)
        )
    return path


def _file_handler(path: Path) -> logging.Handler:
    """The rotating log file, private (its folder too) whoever made them."""
    private_dir(path.parent.parent)
    private_dir(path.parent)
    for old in path.parent.glob(f"{LOG_FILE}*"):
        private_file(old)
    return PrivateRotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
