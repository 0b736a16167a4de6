"""The index database: one SQLite file per namespace (files, chunks, symbols, vectors, FTS5).

``chunks_fts`` is a contentless FTS5 table (porter + unicode61) over three columns: the chunk text
with camelCase split followed by its neighbours' symbol names (:func:`fts_bodies`), its symbol
name and its path. Being contentless, rows are removed with the
FTS5 ``delete`` command, which needs the indexed values: they are recomputed from ``chunks``.
Every file row carries digests of its chunks, symbols and vectors; the manifest's checksums are
hashes over those digests, so an incremental build only hashes what it rewrote.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from autology_mcp.common.errors import StorageError
from autology_mcp.common.text import CODE_FTS_TOKENIZER, code_fts_text

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    language TEXT NOT NULL, skipped TEXT, chunk_count INTEGER NOT NULL, symbol_count INTEGER NOT NULL,
    chunks_digest TEXT NOT NULL, symbols_digest TEXT NOT NULL, vectors_digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    chunk_type TEXT NOT NULL, symbol_name TEXT, symbol_kind TEXT, text TEXT NOT NULL,
    text_hash TEXT NOT NULL, file_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS symbols(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT NOT NULL, file_hash TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    body, symbol, path, content='', tokenize='{CODE_FTS_TOKENIZER}');
"""
TABLES = ("files", "chunks", "vectors", "symbols", "chunks_fts")
# A full build creates these after writing every row (one sort each, instead of growing them row by row).
INDEXES = {
    "chunks_by_path": "CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path, start_line)",
    "symbols_by_path": "CREATE INDEX IF NOT EXISTS symbols_by_path ON symbols(path)",
    "symbols_by_name": "CREATE INDEX IF NOT EXISTS symbols_by_name ON symbols(name COLLATE NOCASE)",
}


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def path_words(path: str) -> str:
    return code_fts_text(path.replace("/", " ").replace(".", " ").replace("_", " ").replace("-", " "))


def fts_bodies(texts: list[str], symbols: list[str | None], types: list[str]) -> list[str]:
    """What ``chunks_fts`` indexes as each chunk's body: its text, then, for a code chunk, the symbol
    names of the chunks before and after it in the file (its neighbourhood), so a query naming two
    neighbouring definitions meets each of them. (A doc section's neighbours are other sections'
    headings, not its context: doc and text chunks get their text alone.) (A chunk already carries its class in its symbol name,
    ``Class.method``, and its signature as its first line.) Measured against the bare text on three
    repositories' commit histories (issue 15): neutral within noise, ahead on the tuning split."""
    return fts_bodies_of([code_fts_text(t) for t in texts], symbols, types)


def fts_bodies_of(normalized: list[str], symbols: list[str | None], types: list[str],
                  symbol_fts: dict[str, str] | None = None) -> list[str]:
    """:func:`fts_bodies` from the chunks' texts already put through ``code_fts_text`` (the builder
    normalises each text once, for its body and its vector). ``code_fts_text`` of ``text + "\n" +
    " ".join(names)`` is the same string as ``code_fts_text(text) + "\n" + " ".join(code_fts_text(name)
    ...)``: a newline or a space stops every rule it applies (camelCase, case folding with its final
    sigma, accents, CJK runs), which tests/code/test_code_build_parallel.py checks on random text.
    ``symbol_fts`` caches the names' normalised forms."""
    cache = {} if symbol_fts is None else symbol_fts
    out = []
    for i, t in enumerate(normalized):
        if types[i] in ("doc", "text"):
            out.append(t)
            continue
        near = [symbols[j] for j in (i - 1, i + 1) if 0 <= j < len(symbols) and symbols[j] and symbols[j] != symbols[i]]
        if not near:
            out.append(t)
            continue
        words = []
        for name in near:
            norm = cache.get(name)
            if norm is None:
                norm = cache[name] = code_fts_text(name)
            words.append(norm)
        out.append(t + "\n" + " ".join(words))
    return out


class ChunkRow(NamedTuple):
    start_line: int
    end_line: int
    chunk_type: str
    symbol_name: str | None
    symbol_kind: str | None
    text: str
    text_hash: str
    vector: bytes
    fts_body: str  # what chunks_fts indexes (fts_bodies), computed by the worker that chunked the file
    fts_symbol: str  # code_fts_text(symbol_name or "")


class SymbolRow(NamedTuple):
    name: str
    kind: str
    start_line: int
    end_line: int
    signature: str


class FileRecord(NamedTuple):
    """One processed file, ready to be written (tuples: cheap to send from a worker process)."""

    path: str
    hash: str
    size: int
    mtime_ns: int
    language: str
    skipped: str | None
    chunks: list[ChunkRow]
    symbols: list[SymbolRow]
    fts_path: str = ""  # path_words(path)


def chunk_line(path, start_line, end_line, chunk_type, symbol_name, symbol_kind, text_hash, file_hash) -> bytes:
    """One chunk's line in its file's chunks digest."""
    fields = [path, str(start_line), str(end_line), chunk_type, symbol_name or "", symbol_kind or "", text_hash,
              file_hash]
    return ("\t".join(fields) + "\n").encode()


def symbol_line(path, name, kind, start_line, end_line, signature, file_hash) -> bytes:
    """One symbol's line in its file's symbols digest."""
    return ("\t".join([path, name, kind, str(start_line), str(end_line), signature, file_hash]) + "\n").encode()


def digests(rec: FileRecord) -> tuple[str, str, str]:
    """(chunks, symbols, vectors) digests of one file's rows in their stored order."""
    ch = hashlib.sha256()
    vec = hashlib.sha256()
    for c in rec.chunks:
        ch.update(chunk_line(rec.path, c.start_line, c.end_line, c.chunk_type, c.symbol_name, c.symbol_kind,
                             c.text_hash, rec.hash))
        vec.update(c.vector)
    sy = hashlib.sha256()
    for s in rec.symbols:
        sy.update(symbol_line(rec.path, s.name, s.kind, s.start_line, s.end_line, s.signature, rec.hash))
    return ch.hexdigest(), sy.hexdigest(), vec.hexdigest()


def files_row(rec: FileRecord) -> tuple:
    """The ``files`` table's row of a processed file (its digests included)."""
    return (rec.path, rec.hash, rec.size, rec.mtime_ns, rec.language, rec.skipped, len(rec.chunks), len(rec.symbols),
            *digests(rec))


class IndexDB:
    """A connection to one namespace's ``index.sqlite``."""

    def __init__(self, path: Path, create: bool = True, without_indexes: bool = False):
        """``without_indexes``: create the tables but not :data:`INDEXES` (a full build's new database,
        which calls :meth:`create_indexes` once its rows are written)."""
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StorageError(str(path), "index database does not exist")
        try:
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=DELETE")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            if create:
                self.conn.executescript(SCHEMA)
                if not without_indexes:
                    self.create_indexes()
        except sqlite3.Error as exc:
            raise StorageError(str(path), f"cannot open index database: {exc}") from exc

    def close(self) -> None:
        self.conn.close()

    def create_indexes(self) -> None:
        for sql in INDEXES.values():
            self.conn.execute(sql)

    def __enter__(self) -> "IndexDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    def file_states(self) -> dict[str, tuple[str, int, int]]:
        """path → (hash, size, mtime_ns)."""
        return {p: (h, s, m) for p, h, s, m in self.conn.execute("SELECT path, hash, size, mtime_ns FROM files")}

    def has_tables(self) -> bool:
        names = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
        return all(t in names for t in TABLES)

    # ------------------------------------------------------------------ writing

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def delete_file(self, path: str) -> None:
        rows = self.conn.execute(
            "SELECT id, text, symbol_name, chunk_type FROM chunks WHERE path = ? ORDER BY id", (path,)).fetchall()
        pw = path_words(path)
        bodies = fts_bodies([r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows])
        self.conn.executemany(
            "INSERT INTO chunks_fts(chunks_fts, rowid, body, symbol, path) VALUES('delete', ?, ?, ?, ?)",
            [(cid, body, code_fts_text(sym or ""), pw) for (cid, _, sym, _), body in zip(rows, bodies, strict=True)],
        )
        self.conn.executemany("DELETE FROM vectors WHERE chunk_id = ?", [(r[0],) for r in rows])
        self.conn.execute("DELETE FROM chunks WHERE path = ?", (path,))
        self.conn.execute("DELETE FROM symbols WHERE path = ?", (path,))
        self.conn.execute("DELETE FROM files WHERE path = ?", (path,))

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        self.conn.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def insert_file(self, rec: FileRecord, row: tuple | None = None) -> None:
        """Write one processed file (``row``: its :func:`files_row`, when the worker computed it).
        Chunk ids are given explicitly, as SQLite would have chosen them (the largest plus one), so
        the three tables are each written with one ``executemany``."""
        self.conn.execute(
            "INSERT INTO files(path, hash, size, mtime_ns, language, skipped, chunk_count, symbol_count,"
            " chunks_digest, symbols_digest, vectors_digest) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
            row or files_row(rec),
        )
        if rec.chunks:
            first = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]
            ids = range(first, first + len(rec.chunks))
            path, fhash, fts_path = rec.path, rec.hash, rec.fts_path or path_words(rec.path)
            self.conn.executemany(
                "INSERT INTO chunks(id, path, start_line, end_line, chunk_type, symbol_name, symbol_kind, text,"
                " text_hash, file_hash) VALUES(?,?,?,?,?,?,?,?,?,?)",
                [(i, path, c.start_line, c.end_line, c.chunk_type, c.symbol_name, c.symbol_kind, c.text, c.text_hash,
                  fhash) for i, c in zip(ids, rec.chunks)],
            )
            self.conn.executemany("INSERT INTO vectors(chunk_id, vector) VALUES(?, ?)",
                                  [(i, c.vector) for i, c in zip(ids, rec.chunks)])
            self.conn.executemany("INSERT INTO chunks_fts(rowid, body, symbol, path) VALUES(?, ?, ?, ?)",
                                  [(i, c.fts_body, c.fts_symbol, fts_path) for i, c in zip(ids, rec.chunks)])
        if rec.symbols:
            self.conn.executemany(
                "INSERT INTO symbols(path, name, kind, start_line, end_line, signature, file_hash)"
                " VALUES(?,?,?,?,?,?,?)",
                [(rec.path, s.name, s.kind, s.start_line, s.end_line, s.signature, rec.hash) for s in rec.symbols],
            )

    # ------------------------------------------------------------------ summaries

    def stats(self) -> dict[str, int]:
        q = self.conn.execute
        return {
            "files": q("SELECT count(*) FROM files WHERE skipped IS NULL").fetchone()[0],
            "files_skipped": q("SELECT count(*) FROM files WHERE skipped IS NOT NULL").fetchone()[0],
            "chunks": q("SELECT coalesce(sum(chunk_count), 0) FROM files").fetchone()[0],
            "symbols": q("SELECT coalesce(sum(symbol_count), 0) FROM files").fetchone()[0],
            "source_bytes": q("SELECT coalesce(sum(size), 0) FROM files WHERE skipped IS NULL").fetchone()[0],
        }

    def checksums(self) -> dict[str, str]:
        """Manifest checksums, from the per-file digests (cheap: no chunk text is read)."""
        f, c, s, v = (hashlib.sha256() for _ in range(4))
        for path, h, skipped, cd, sd, vd in self.conn.execute(
            "SELECT path, hash, skipped, chunks_digest, symbols_digest, vectors_digest FROM files ORDER BY path"
        ):
            f.update(f"{path}\t{h}\t{skipped or ''}\n".encode())
            c.update(f"{path}\t{cd}\n".encode())
            s.update(f"{path}\t{sd}\n".encode())
            v.update(f"{path}\t{vd}\n".encode())
        return {"files": f.hexdigest(), "chunks": c.hexdigest(), "symbols": s.hexdigest(), "vectors": v.hexdigest()}

    def iter_file_rows(self) -> Iterator[tuple]:
        yield from self.conn.execute(
            "SELECT path, hash, size, mtime_ns, language, skipped, chunk_count, symbol_count, chunks_digest,"
            " symbols_digest, vectors_digest FROM files ORDER BY path"
        )

    def chunks_of(self, path: str) -> list[tuple]:
        return self.conn.execute(
            "SELECT c.start_line, c.end_line, c.chunk_type, c.symbol_name, c.symbol_kind, c.text, c.text_hash,"
            " c.file_hash, v.vector FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id"
            " WHERE c.path = ? ORDER BY c.id",
            (path,),
        ).fetchall()

    def symbols_of(self, path: str) -> list[tuple]:
        return self.conn.execute(
            "SELECT name, kind, start_line, end_line, signature, file_hash FROM symbols WHERE path = ? ORDER BY id",
            (path,),
        ).fetchall()

