"""Opening autology's SQLite cache databases safely when several processes start at once.

Every cache database (nodes, sessions, the verdict ledger) is opened the same way: WAL mode,
``synchronous=NORMAL`` and a 30 s busy timeout, so any number of processes share it. Two traps:

- ``busy_timeout`` covers ordinary lock waits, but SQLite answers SQLITE_BUSY at once, without
  calling the busy handler, in a few cases: two connections switching a new file to WAL, a read
  transaction that must be upgraded, WAL recovery. Those are short, so :func:`retry_locked` retries.
- A busy or locked database is not a damaged one. A cache is thrown away and rebuilt only for
  real damage (:func:`is_damaged`): deleting a database another process is creating, and its WAL
  file with it, would pull the tables out from under that process.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

BUSY_TIMEOUT_MS = 30_000

T = TypeVar("T")


def retry_locked(step: Callable[[], T], timeout_ms: int = BUSY_TIMEOUT_MS) -> T:
    """Run ``step``, retrying while SQLite says the database is locked or busy."""
    deadline = time.monotonic() + timeout_ms / 1000
    delay = 0.001
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_damaged(exc: sqlite3.Error) -> bool:
    """A database error that rebuilding the cache fixes; not a busy or locked database (waiting
    fixes that), nor an I/O or permission problem (rebuilding would fail the same way)."""
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return not (_is_busy(exc) or "disk i/o" in text or "readonly" in text or "unable to open" in text)
    return isinstance(exc, sqlite3.DatabaseError)


def connect_wal(path: Path, timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A connection in autocommit mode (``isolation_level=None``), WAL journal, busy timeout set."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
        retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL"), timeout_ms)
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


def schema_version(conn: sqlite3.Connection) -> str | None:
    """The database's ``meta`` schema_version; None for a new database (no ``meta`` table yet)."""
    try:
        row = retry_locked(lambda: conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone())
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def create_schema(conn: sqlite3.Connection, script: str, meta: Mapping[str, str]) -> None:
    """Run the ``CREATE ... IF NOT EXISTS`` script and add the ``meta`` rows not there yet (both
    retried while another process creating the same database holds it)."""
    retry_locked(lambda: conn.executescript(script))
    retry_locked(lambda: conn.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", list(meta.items())))
