"""Server logs: stderr (what the editor's log panel shows) and a rotating file under
`$DEEPACP_HOME/logs/` (what `deepacp doctor` points to), with secrets redacted."""

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


def log_path() -> Path:
    return deepacp_home() / "logs" / LOG_FILE


class RedactSecrets(logging.Filter):
    """Replaces the values of secret-looking environment variables in every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if secrets := secret_values():
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
                record.exc_info = None
            record.msg, record.args = redact(message, secrets), None
        return True


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


def configure(face: str, one_line: bool = False) -> Path | None:
    """Log to stderr and to the rotating file; returns the file's path (None if unwritable).
    `one_line`: each record in one line on stderr."""
    level = os.environ.get("DEEPACP_LOG_LEVEL", "INFO").upper()
    root = logging.getLogger()
    root.setLevel(level)
    redactor = RedactSecrets()
    layout = f"%(asctime)s {face} %(levelname)s %(name)s: %(message)s"
    form = logging.Formatter(layout)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(max(logging.WARNING, logging.getLevelName(level)))
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
    if one_line:
        stderr.setFormatter(FirstLine(layout))
    return path


def _file_handler(path: Path) -> logging.Handler:
    """The rotating log file, private (its folder too) whoever made them."""
    private_dir(path.parent.parent)
    private_dir(path.parent)
    for old in path.parent.glob(f"{LOG_FILE}*"):
        private_file(old)
    return PrivateRotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
