"""Counters of retrieval verdicts and claim-check outcomes: ``.autology/cache/ledger.sqlite``.

Seed 001's telemetry: how often an answer was grounded, weak, ambiguous (a clarifying question)
or without evidence, and how many checked claims were supported. Every search records its verdict
and every claim check its outcomes; ``autology status`` and ``autology_status`` show the counts
and rates.

Storage: one small SQLite table of (kind, name) -> count in WAL mode, incremented with an upsert
inside one transaction, so any number of processes record concurrently without losing a count
(SQLite serialises the writers; ``busy_timeout`` makes a writer wait instead of failing). WAL with
``synchronous=NORMAL`` does not fsync on each commit, which keeps a record well under a
millisecond; a power cut can lose the last few increments, never corrupt the table. The
connection is kept per process and reopened if the file was deleted or replaced (deleting
``.autology/cache/`` is documented as safe: the counters then start again from zero).

Counts are kept only for a project that has an autology store (``.autology/``): a search or a
claim check run in a plain folder does not create one. Recording is telemetry: it must never make a
search or a claim check fail. A record that cannot
be written (read-only file system, disk full) is logged on stderr and dropped; reading the
counters of a project that never recorded anything gives zeros.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.common.sqlite import connect_wal, retry_locked

if TYPE_CHECKING:
    from autology_mcp.knowledge.service import Autology, StatusResult

log = logging.getLogger("autology.ledger")

VERDICTS = ("grounded", "weak", "ambiguous", "no_evidence")
CLAIM_OUTCOMES = ("supported", "unsupported", "unresolved")

LEDGER_FILE = "ledger.sqlite"
_BUSY_TIMEOUT_MS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    count INTEGER NOT NULL,
    first TEXT NOT NULL,
    last TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);
"""

_UPSERT = """
INSERT INTO counters (kind, name, count, first, last) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (kind, name) DO UPDATE SET count = count + excluded.count, last = excluded.last
"""


def ledger_path(root: Path) -> Path:
    return ProjectPaths(Path(root)).cache / LEDGER_FILE


class _Connection:
    """One process's connection to one ledger file, reopened when the file is deleted or replaced."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()
        self.conn: sqlite3.Connection | None = None
        self.identity: tuple[int, int] | None = None

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def get(self, create: bool) -> sqlite3.Connection | None:
        """The open connection (caller holds ``self.lock``); None if there is no file and ``create`` is False."""
        identity = self._stat()
        if self.conn is not None and identity is not None and identity == self.identity:
            return self.conn
        self.close()
        if identity is None and not create:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect_wal(self.path, _BUSY_TIMEOUT_MS)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(str(self.path), f"cannot open the ledger: {exc}") from exc
        try:
            retry_locked(lambda: conn.executescript(_SCHEMA), _BUSY_TIMEOUT_MS)
        except sqlite3.Error as exc:
            conn.close()
            raise StorageError(str(self.path), f"cannot open the ledger: {exc}") from exc
        self.conn = conn
        self.identity = self._stat()
        return conn

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
        self.conn, self.identity = None, None


_connections: dict[tuple[int, Path], _Connection] = {}
_connections_lock = threading.Lock()


def _connection(root: Path) -> _Connection:
    path = ledger_path(root).absolute()
    key = (os.getpid(), path)  # a forked child never reuses its parent's connection
    with _connections_lock:
        conn = _connections.get(key)
        if conn is None:
            conn = _connections[key] = _Connection(path)
        return conn


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _add(root: Path, kind: str, counts: Mapping[str, int]) -> None:
    rows = [(kind, name, n) for name, n in counts.items() if n]
    if not rows:
        return
    if not ProjectPaths(Path(root)).base.is_dir():
        return  # no autology store here (a CLI run in a plain folder): do not create .autology/ for telemetry
    handle = _connection(root)
    now = _now()
    try:
        with handle.lock:
            conn = handle.get(create=True)
            assert conn is not None

            def transaction() -> None:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany(_UPSERT, [(k, name, n, now, now) for k, name, n in rows])
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise

            retry_locked(transaction, _BUSY_TIMEOUT_MS)
    except (StorageError, sqlite3.Error, OSError) as exc:
        log.warning("could not record %s counts in %s: %s", kind, handle.path, exc)


def record_verdict(root: Path, verdict: str) -> None:
    """Count one search answer's verdict. Raises ValidationError for an unknown verdict; never fails on storage."""
    if verdict not in VERDICTS:
        raise ValidationError("verdict", f"unknown verdict {verdict!r}", VERDICTS)
    _add(root, "verdict", {verdict: 1})


def record_answer(root: Path, verdict: str) -> None:
    """Count a search or context answer's verdict; never raises (telemetry must not fail the answer)."""
    try:
        record_verdict(root, verdict)
    except Exception:
        log.debug("recording the verdict failed", exc_info=True)


def record_claims(root: Path, outcomes: Iterable[str] | Mapping[str, int]) -> None:
    """Count claim-check outcomes: an iterable of outcome names (one per claim) or a mapping outcome -> count.

    Raises ValidationError for an unknown outcome or a negative count (nothing is recorded then);
    never fails on storage.
    """
    counts: dict[str, int] = {}
    items = outcomes.items() if isinstance(outcomes, Mapping) else ((name, 1) for name in outcomes)
    for name, n in items:
        if name not in CLAIM_OUTCOMES:
            raise ValidationError("outcome", f"unknown claim outcome {name!r}", CLAIM_OUTCOMES)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValidationError("outcome", f"count of {name!r} must be a whole number >= 0, got {n!r}")
        counts[name] = counts.get(name, 0) + n
    _add(root, "claim", counts)


def _rate(part: int, total: int) -> float | None:
    return round(part / total, 4) if total else None


def counters(root: Path) -> dict[str, Any]:
    """The counts and rates so far (zeros and null rates when nothing was recorded).

    ``{"searches": N, "verdicts": {grounded, weak, ambiguous, no_evidence},
    "verdict_rates": {grounded_rate, ...}, "claims": N, "claim_outcomes": {supported, unsupported,
    unresolved}, "claim_rates": {supported_rate, ...}, "since": first record (UTC) or None,
    "last": last record or None}``. Rates are fractions 0-1 (None before the first record).
    """
    rows: list[tuple[str, str, int, str, str]] = []
    handle = _connection(root)
    try:
        with handle.lock:
            conn = handle.get(create=False)
            if conn is not None:
                rows = retry_locked(
                    lambda: conn.execute("SELECT kind, name, count, first, last FROM counters").fetchall(),
                    _BUSY_TIMEOUT_MS,
                )
    except (StorageError, sqlite3.Error) as exc:
        log.warning("could not read the ledger %s: %s", handle.path, exc)
    verdicts = {v: 0 for v in VERDICTS}
    claims = {c: 0 for c in CLAIM_OUTCOMES}
    for kind, name, count, _first, _last in rows:
        if kind == "verdict" and name in verdicts:
            verdicts[name] = count
        elif kind == "claim" and name in claims:
            claims[name] = count
    searches, checked = sum(verdicts.values()), sum(claims.values())
    return {
        "searches": searches,
        "verdicts": verdicts,
        "verdict_rates": {f"{v}_rate": _rate(n, searches) for v, n in verdicts.items()},
        "claims": checked,
        "claim_outcomes": claims,
        "claim_rates": {f"{c}_rate": _rate(n, checked) for c, n in claims.items()},
        "since": min((r[3] for r in rows), default=None),
        "last": max((r[4] for r in rows), default=None),
    }


def summary_lines(data: Mapping[str, Any]) -> list[str]:
    """``counters()`` as the lines ``autology status`` prints."""

    def pct(rate: float | None) -> str:
        return "-" if rate is None else f"{rate * 100:.0f}%"

    v, vr = data["verdicts"], data["verdict_rates"]
    c, cr = data["claim_outcomes"], data["claim_rates"]
    searches = (
        f"{data['searches']} searches: grounded {v['grounded']} ({pct(vr['grounded_rate'])}), weak {v['weak']} "
        f"({pct(vr['weak_rate'])}), ambiguous {v['ambiguous']} ({pct(vr['ambiguous_rate'])}), no evidence "
        f"{v['no_evidence']} ({pct(vr['no_evidence_rate'])})"
    )
    claims = (
        f"{data['claims']} claims checked: supported {c['supported']} ({pct(cr['supported_rate'])}), unsupported "
        f"{c['unsupported']} ({pct(cr['unsupported_rate'])}), unresolved {c['unresolved']} ({pct(cr['unresolved_rate'])})"
    )
    return [f"  retrieval: {searches}", f"             {claims}"]


def status_with_counters(autology: Autology) -> StatusResult:
    """``autology_status``'s answer: the knowledge graph's statistics with these counters in ``retrieval``,
    and whether semantic recall is on here (``retrieval.semantic``: the model, the turns with vectors)."""
    from autology_mcp.sessions.semantic import coverage

    root = autology.store.root
    return autology.status().model_copy(update={"retrieval": {**counters(root), "semantic": coverage(root)}})
