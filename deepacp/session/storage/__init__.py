"""Where sessions are kept: their records (`records.py`) in SQLite under `$DEEPACP_HOME`
(`sqlite.py`) or in a PostgreSQL database several machines share (`postgres.py`, its
schema in `migrations.py`), each with LangGraph's checkpoints of their threads
(`checkpoints.py`); an inline edit's session is kept in memory only (`ephemeral.py`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from deepacp.config import database_url
from deepacp.errors import ConfigError
from deepacp.session.storage.records import Store
from deepacp.session.storage.sqlite import SessionStore

log = logging.getLogger(__name__)


def open_store(home: Path) -> Store:
    """The store sessions live in: PostgreSQL when a database URL is configured, else
    SQLite under `home`. Nothing connects yet (a database that is down is an error when a
    session is made or listed); the Postgres driver is imported only when configured."""
    try:
        url = database_url(home)
    except ConfigError as exc:  # session/new reports it, where the model is read
        log.warning("sessions stay in SQLite under %s: %s", home, exc)
        return SessionStore(home)
    if url is None:
        return SessionStore(home)
    from deepacp.session.storage.postgres import PostgresStore

    return PostgresStore(home, url)
