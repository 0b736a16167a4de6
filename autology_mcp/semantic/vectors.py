"""The vectors of the memory's texts: a derived cache in ``.autology/cache/semantic.sqlite``.

One row per text (``kind``, ``key``): the digest of the text it was computed from, and its vector
(float32, unit length). :meth:`VectorCache.sync` is incremental: only a text whose digest changed, or
that is new, is embedded again; keys no longer given are dropped. The model's name and dimension are
kept in ``meta``: another model makes the cache start again. Deleting the file loses nothing but the
time to embed again.

Kinds: ``session_turn`` (session memory's turns) and ``node_piece`` (knowledge nodes' pieces:
semantic/nodes.py); code and docs get no vectors (docs/semantic.md). Searching loads one kind's vectors into one numpy matrix, kept while the file is
unchanged, and ranks by dot product (cosine: the vectors are unit length).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from autology_mcp.common.sqlite import connect_wal, create_schema, retry_locked, schema_version

DB_NAME = "semantic.sqlite"
SCHEMA_VERSION = "1"
BATCH = 64  # texts embedded at a time
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (kind TEXT NOT NULL, key TEXT NOT NULL, digest TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (kind, key));
"""

Embed = Callable[[list[str]], np.ndarray]  # texts -> (n, dimension) float32, unit rows


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class VectorCache:
    """The vector cache of one project for one model."""

    _matrices: dict[tuple[str, str, str], tuple[tuple[int, int], list[str], np.ndarray]] = {}
    _lock = threading.Lock()

    def __init__(self, root: Path, model: str, dimension: int):
        self.path = Path(root) / ".autology" / "cache" / DB_NAME
        self.model, self.dimension = model, dimension

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect_wal(self.path)
        if schema_version(conn) not in (None, SCHEMA_VERSION) or self._model_of(conn) not in (None, self._model_key()):
            retry_locked(lambda: conn.executescript("DROP TABLE IF EXISTS vectors; DROP TABLE IF EXISTS meta;"))
        create_schema(conn, _SCHEMA, {"schema_version": SCHEMA_VERSION, "model": self._model_key()})
        return conn

    def _model_key(self) -> str:
        return f"{self.model}@{self.dimension}"

    @staticmethod
    def _model_of(conn: sqlite3.Connection) -> str | None:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def sync(self, kind: str, texts: dict[str, str], embed: Embed, should_stop: Callable[[], bool] | None = None,
             progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the texts of ``kind`` that are new or changed, drop the keys not given; returns how many
        were embedded. ``should_stop`` is asked between batches (a server shutting down); ``progress`` is
        told (embedded so far, to embed in all) before the first batch and after each."""
        conn = self._connect()
        try:
            known = dict(conn.execute("SELECT key, digest FROM vectors WHERE kind = ?", (kind,)).fetchall())
            gone = [k for k in known if k not in texts]
            for start in range(0, len(gone), 500):
                part = gone[start : start + 500]
                retry_locked(lambda part=part: conn.execute(
                    f"DELETE FROM vectors WHERE kind = ? AND key IN ({','.join('?' * len(part))})", (kind, *part)))
            todo = [(k, t, digest(t)) for k, t in texts.items() if known.get(k) != digest(t)]
            done = 0
            if progress:
                progress(0, len(todo))
            for start in range(0, len(todo), BATCH):
                if should_stop and should_stop():
                    break
                batch = todo[start : start + BATCH]
                vectors = np.asarray(embed([t for _, t, _ in batch]), dtype=np.float32)
                rows = [(kind, k, d, vectors[i].tobytes()) for i, (k, _, d) in enumerate(batch)]
                retry_locked(lambda rows=rows: conn.executemany(
                    "INSERT OR REPLACE INTO vectors (kind, key, digest, vector) VALUES (?, ?, ?, ?)", rows))
                done += len(batch)
                if progress:
                    progress(done, len(todo))
            return done
        finally:
            conn.close()

    def counts(self) -> dict[str, int]:
        """Vectors per kind ({} when there is no cache yet)."""
        if not self.path.exists():
            return {}
        conn = self._connect()
        try:
            return dict(conn.execute("SELECT kind, count(*) FROM vectors GROUP BY kind").fetchall())
        finally:
            conn.close()

    def matrix(self, kind: str) -> tuple[list[str], np.ndarray]:
        """The keys of ``kind`` and their vectors as one (n, dimension) matrix; kept while the file is unchanged."""
        if not self.path.exists():
            return [], np.zeros((0, self.dimension), dtype=np.float32)
        stat = self.path.stat()
        wal = self.path.with_name(self.path.name + "-wal")
        signature = (stat.st_mtime_ns, wal.stat().st_mtime_ns if wal.exists() else 0)
        cache_key = (str(self.path), self._model_key(), kind)
        with self._lock:
            cached = self._matrices.get(cache_key)
            if cached and cached[0] == signature:
                return cached[1], cached[2]
        conn = self._connect()
        try:
            rows = conn.execute("SELECT key, vector FROM vectors WHERE kind = ? ORDER BY key", (kind,)).fetchall()
        finally:
            conn.close()
        keys = [r[0] for r in rows]
        matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), self.dimension)
                  if rows else np.zeros((0, self.dimension), dtype=np.float32))
        with self._lock:
            self._matrices[cache_key] = (signature, keys, matrix)
        return keys, matrix

    def clear(self) -> None:
        """Remove the cache (``autology semantic disable``)."""
        for suffix in ("", "-wal", "-shm"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        with self._lock:
            for key in [k for k in self._matrices if k[0] == str(self.path)]:
                del self._matrices[key]
