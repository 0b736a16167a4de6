"""The session search index: SQLite FTS5 in ``.autology/cache/sessions.sqlite``, derived from the session files.

Documents are the chunks of every session (``doc_type`` ``session_chunk``, id ``<session>:<n>``) and
each session's handoff (``handoff``, id ``<session>:handoff``); the text of both starts with the
session title. Mined insight candidates are kept beside them (table ``insights``).

:meth:`SessionIndex.sync` brings the index in line with ``.autology/sessions/``: a session file
whose size or modification time differs from what was indexed is taken in again, a deleted one is
dropped. A session file that only grew (format 2: the same ``file_id``, appended steps) is read from
the byte the index stopped at: its new turns are chunked from the state the chunker was left in
(the open last chunk is replaced, new ones added), their insights mined, the handoff replaced, so
indexing a step costs the same however long the session is (issue 29). A changed title (every
chunk starts with it) or anything else is indexed again from the start. Checking costs one
directory listing, so every search syncs first; a missing or damaged database is rebuilt from the files.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from autology_mcp.common.errors import StorageError
from autology_mcp.common.sqlite import connect_wal, create_schema, is_damaged, retry_locked, schema_version
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.common.text import SESSION_FTS_TOKENIZER, fts_text
from autology_mcp.sessions.paths import sessions_dir

SCHEMA_VERSION = "4"  # 2: the text through text.fts_text (CJK bigrams); 3: incremental (sources.progress, docs.stampless);
# 4: an answer is shown under the name of the agent that gave it (issue 39), not always "Claude"
DB_NAME = "sessions.sqlite"
READ_BLOCK = 8 * 1024 * 1024  # how much of a session file indexing it from its start reads at a time
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (session_id TEXT PRIMARY KEY, signature TEXT NOT NULL, title TEXT NOT NULL,
    last_timestamp TEXT NOT NULL, turns INTEGER NOT NULL, handoff TEXT NOT NULL, error TEXT,
    file_id TEXT NOT NULL DEFAULT '', indexed_bytes INTEGER NOT NULL DEFAULT 0, progress TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE, doc_type TEXT NOT NULL, session_id TEXT NOT NULL,
    title TEXT NOT NULL, text TEXT NOT NULL, timestamp TEXT NOT NULL, turn_start INTEGER NOT NULL,
    turn_end INTEGER NOT NULL, stampless INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS docs_session ON docs (session_id);
CREATE INDEX IF NOT EXISTS docs_stampless ON docs (session_id) WHERE stampless = 1;
CREATE INDEX IF NOT EXISTS docs_type_time ON docs (doc_type, timestamp);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(text, tokenize = '{SESSION_FTS_TOKENIZER}');
CREATE TABLE IF NOT EXISTS insights (session_id TEXT NOT NULL, turn INTEGER NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, score REAL NOT NULL, timestamp TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS insights_session ON insights (session_id);
"""


@dataclass(frozen=True)
class Doc:
    rowid: int
    doc_id: str
    doc_type: str
    session_id: str
    title: str
    text: str
    timestamp: str
    turn_start: int
    turn_end: int


def _signature(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


class SessionIndex:
    """One SQLite connection to a project's session index (thread-safe; shared per project path)."""

    _shared: dict[Path, SessionIndex] = {}
    _shared_lock = threading.Lock()

    def __init__(self, root: Path):
        self.root = Path(root)
        self.path = ProjectPaths(self.root).cache / DB_NAME
        self._lock = threading.RLock()
        self.conn: sqlite3.Connection | None = None
        self._synced_dir: tuple[int, int, int] | None = None  # the sessions folder's stat at the last full check
        self._conn_inode: int | None = None  # the database file the connection has open

    @classmethod
    def for_root(cls, root: Path) -> SessionIndex:
        key = Path(root).resolve()
        with cls._shared_lock:
            index = cls._shared.get(key)
            if index is None:
                index = cls._shared[key] = cls(key)
            return index

    # ---------------------------------------------------------------- connection

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect_wal(self.path)
        try:
            version = schema_version(conn)
            if version is not None and version != SCHEMA_VERSION:
                raise sqlite3.DatabaseError("old schema")
            create_schema(conn, _SCHEMA, {"schema_version": SCHEMA_VERSION})
        except BaseException:
            conn.close()
            raise
        return conn

    def _delete_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def _reopen(self) -> sqlite3.Connection:
        """A fresh database: the old one was damaged (it is derived, so it is simply rebuilt)."""
        self._synced_dir = None
        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
        self.conn = None
        self._delete_files()
        self.conn = self._connect()
        self._conn_inode = self._inode()
        return self.conn

    def _inode(self) -> int | None:
        try:
            return os.stat(self.path).st_ino
        except OSError:
            return None

    def connection(self) -> sqlite3.Connection:
        with self._lock:
            if self.conn is not None and self._inode() != self._conn_inode:
                self.conn.close()  # cache/ was deleted or the file replaced under us: use the one there now
                self.conn = None
                self._synced_dir = None
            if self.conn is None:
                try:
                    self.conn = self._connect()
                    self._conn_inode = self._inode()
                except sqlite3.DatabaseError as exc:
                    if not is_damaged(exc):
                        raise StorageError(str(self.path), f"cannot open the session index: {exc}") from exc
                    self._reopen()
            assert self.conn is not None
            return self.conn

    def close(self) -> None:
        with self._lock:
            if self.conn is not None:
                self.conn.close()
                self.conn = None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent read of the index, synced with the session files first (rebuilt if damaged)."""
        with self._lock:
            for attempt in range(2):
                try:
                    self.sync()
                    conn = self.connection()
                    conn.execute("BEGIN")
                    break
                except sqlite3.DatabaseError as exc:
                    if attempt or not is_damaged(exc):
                        raise StorageError(str(self.path), f"cannot read the session index: {exc}") from exc
                    self._reopen()
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    # ---------------------------------------------------------------- sync

    def _on_disk(self) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        try:
            entries = list(os.scandir(sessions_dir(self.root)))
        except FileNotFoundError:
            return found
        except OSError as exc:
            raise StorageError(str(sessions_dir(self.root)), exc.strerror or str(exc)) from exc
        for entry in entries:
            if entry.name.endswith(".jsonl") and not entry.name.startswith("."):
                try:
                    found[entry.name[: -len(".jsonl")]] = (entry.path, _signature(entry.stat()))
                except FileNotFoundError:
                    continue
        return found

    def _folder_unchanged(self) -> tuple[bool, tuple[int, int, int] | None]:
        """Whether the sessions folder is as at the last full check (then no session file changed).

        Session files are only ever replaced by an atomic rename, which updates the folder's
        modification time, or appended to, after which the writer sets it (store.append_step). A
        folder modified in the last two seconds is not trusted (a second
        rename within the file system's timestamp granularity would not show): it is checked file by file.
        """
        try:
            st = os.stat(sessions_dir(self.root))
        except OSError:
            return False, None
        signature = (st.st_mtime_ns, st.st_ino, st.st_nlink)
        settled = time.time_ns() - st.st_mtime_ns > 2_000_000_000
        return signature == self._synced_dir, signature if settled else None

    def sync(self) -> int:
        """Re-index the session files that changed; returns how many sessions were (re)indexed or dropped."""
        with self._lock:
            try:
                return self._sync()
            except sqlite3.DatabaseError as exc:
                if not is_damaged(exc):
                    raise StorageError(str(self.path), f"cannot update the session index: {exc}") from exc
                self._reopen()
                return self._sync()

    def _sync(self) -> int:
        unchanged, folder = self._folder_unchanged()
        if unchanged and self.conn is not None and self._inode() == self._conn_inode:
            return 0
        disk = self._on_disk()
        conn = self.connection()
        indexed = dict(conn.execute("SELECT session_id, signature FROM sources").fetchall())
        stale = [sid for sid, (_, sig) in disk.items() if indexed.get(sid) != sig]
        gone = [sid for sid in indexed if sid not in disk]
        if not stale and not gone:
            self._synced_dir = folder
            return 0
        with self._write() as conn:
            known = {row[0]: row for row in conn.execute(
                "SELECT session_id, signature, title, last_timestamp, turns, file_id, indexed_bytes, progress"
                " FROM sources")}
            changed = 0
            for sid in gone:
                if sid in known:
                    self._drop(conn, sid)
                    changed += 1
            for sid in stale:
                path, sig = disk[sid]
                row = known.get(sid)
                if row is not None and row[1] == sig:
                    continue  # another process indexed it meanwhile (read under the write lock)
                if row is None or not _extend(conn, sid, Path(path), sig, row):
                    self._drop(conn, sid)
                    self._add(conn, sid, Path(path), sig)
                changed += 1
        self._synced_dir = folder
        return changed

    @staticmethod
    def _drop(conn: sqlite3.Connection, sid: str) -> None:
        rowids = [r[0] for r in conn.execute("SELECT rowid FROM docs WHERE session_id = ?", (sid,))]
        conn.executemany("DELETE FROM docs_fts WHERE rowid = ?", [(r,) for r in rowids])
        conn.execute("DELETE FROM docs WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM insights WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM sources WHERE session_id = ?", (sid,))

    @staticmethod
    def _add(conn: sqlite3.Connection, sid: str, path: Path, sig: str) -> None:
        """Index a session file from its start (after ``_drop``); a format 2 file is read in blocks of
        :data:`READ_BLOCK` (whole steps taken in at a time), so memory stays bounded however long the session."""
        from autology_mcp.sessions.store import (
            SessionRecord,
            _first_row,
            _record_from_header,
            apply_checkpoint,
            last_checkpoint,
            parse_bytes,
            scan_lines,
        )

        try:
            with open(path, "rb") as handle:
                first = handle.readline()
                header = _first_row(first)
                if header is None or header.get("format") != 2:
                    record = parse_bytes(first + handle.read(), str(path))  # format 1 (or an error)
                    last_n = record.turns[-1].n if record.turns else -1
                    _take_in(conn, sid, sig, record.turns, record, Progress(last_n=last_n), record.file_id, record.end,
                             new=True)
                    return
                final = _record_from_header(header, str(path))
                found = last_checkpoint(handle, os.fstat(handle.fileno()).st_size)
                if found is None:
                    raise StorageError(str(path), "a session file without a checkpoint (its first write was cut)")
                apply_checkpoint(final, found[0])  # its title is every chunk's: read it first
                progress, position, buffer, new = Progress(), len(first), b"", True
                handle.seek(position)
                while position < found[1]:
                    block = handle.read(min(READ_BLOCK, found[1] - position - len(buffer)))
                    if not block:
                        break
                    buffer += block
                    steps, _ = scan_lines(buffer[: buffer.rfind(b"\n") + 1], position, progress.last_n)
                    if not steps:
                        continue  # one step longer than a block: read on
                    record = SessionRecord(session_id=sid)
                    turns = []
                    for step, checkpoint, end in steps:
                        turns += step
                        apply_checkpoint(record, checkpoint)
                    buffer = buffer[end - position :]
                    position = end
                    _take_in(conn, sid, sig, turns, record, progress, final.file_id, end, new=new, title=final.title)
                    new = False
                if new:
                    raise StorageError(str(path), "a session file without a complete checkpoint")
        except (OSError, StorageError) as exc:
            SessionIndex._drop(conn, sid)  # what was taken in before the error
            conn.execute(
                "INSERT INTO sources (session_id, signature, title, last_timestamp, turns, handoff, error)"
                " VALUES (?, ?, '', '', 0, '', ?)", (sid, sig, str(exc))
            )  # remembered, so a damaged file is not re-read on every search

    def scrub(self) -> bool:
        """After sessions were forgotten: leave no byte of their text in the database files.

        Dropping rows is not enough. FTS5 keeps a deleted row's tokens in its index segments until
        they are merged, SQLite keeps deleted rows in free pages, and the WAL keeps old page images:
        so sync (dropping the forgotten sessions), merge every FTS5 segment, VACUUM and truncate the
        WAL. True when the WAL could be truncated (another process reading at that moment keeps it;
        the next scrub or checkpoint finishes the job)."""
        with self._lock:
            self.sync()
            conn = self.connection()
            retry_locked(lambda: conn.execute("INSERT INTO docs_fts(docs_fts) VALUES('optimize')"))
            retry_locked(lambda: conn.execute("VACUUM"))
            busy, _, _ = retry_locked(lambda: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
            return busy == 0

    def rebuild(self) -> int:
        """Drop the database and index every session file again; returns the number of sessions."""
        with self._lock:
            try:
                with self._write() as conn:  # in place: other processes keep using this same file
                    for table in ("docs", "docs_fts", "insights", "sources"):
                        conn.execute(f"DELETE FROM {table}")
                self._synced_dir = None
            except sqlite3.OperationalError:
                raise
            except sqlite3.DatabaseError:
                self._reopen()
            self._sync()
            return self.connection().execute("SELECT COUNT(*) FROM sources").fetchone()[0]


@dataclass
class Progress:
    """How far the index took in a session file (``sources.progress``, JSON): the chunker's state,
    the turns indexed, the last turn's number, and the session's last timestamp the chunks without
    one of their own carry (``docs.stampless``)."""

    chunker: dict = field(default_factory=dict)
    count: int = 0
    last_n: int = -1
    last_timestamp: str = ""
    stampless: int = 0  # closed chunks with no timestamp of their own

    def dumps(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str) -> Progress | None:
        try:
            data = json.loads(text)
            return cls(dict(data["chunker"]), int(data["count"]), int(data["last_n"]), str(data["last_timestamp"]),
                       int(data["stampless"]))
        except (ValueError, TypeError, KeyError):
            return None


def _extend(conn: sqlite3.Connection, sid: str, path: Path, sig: str, row: tuple) -> bool:
    """Take in the steps appended to a format 2 session file since it was indexed; False when it
    must be indexed from its start (another generation of the file, a damaged state, a new title)."""
    from autology_mcp.sessions.store import SessionRecord, _first_row, apply_checkpoint, scan_lines

    _, _, title, _, _, file_id, indexed_bytes, progress_text = row
    progress = Progress.loads(progress_text)
    if not file_id or progress is None:
        return False
    try:
        with open(path, "rb") as handle:
            header = _first_row(handle.readline())
            if header is None or header.get("file_id") != file_id or os.fstat(handle.fileno()).st_size < indexed_bytes:
                return False
            handle.seek(indexed_bytes)
            data = handle.read()
    except OSError:
        return False
    steps, _ = scan_lines(data, indexed_bytes, progress.last_n)
    if not steps:  # a step being written: nothing closed yet
        conn.execute("UPDATE sources SET signature = ? WHERE session_id = ?", (sig, sid))
        return True
    record = SessionRecord(session_id=sid)
    turns = []
    for step, checkpoint, end in steps:
        turns += step
        apply_checkpoint(record, checkpoint)
        record.end = end
    if record.title != title:
        return False  # every chunk starts with the title: all of them change
    _take_in(conn, sid, sig, turns, record, progress, file_id, record.end, new=False)
    return True


def _take_in(conn: sqlite3.Connection, sid: str, sig: str, turns: list, record, progress: Progress, file_id: str,
             indexed_bytes: int, new: bool, title: str | None = None) -> None:
    """Index a session's next turns (the first ones when ``new``): their chunks (the open chunk
    replaced), their insights, the handoff; then the session's row. ``title``: the session's (as of
    its last checkpoint), when the record is of an earlier one."""
    from autology_mcp.sessions.chunking import Chunker
    from autology_mcp.sessions.insights import mine_turns
    from autology_mcp.sessions.turns import CLAUDE

    title = title if title is not None else record.title
    last = record.state.last_timestamp
    chunker = Chunker.from_dict(progress.chunker) if progress.chunker else Chunker(agent=record.state.agent or CLAUDE)
    if not new:
        _delete_docs(conn, [f"{sid}:{chunker.n}", f"{sid}:handoff"])  # the open chunk (if any) and the handoff
        if last != progress.last_timestamp and progress.stampless:
            conn.execute("UPDATE docs SET timestamp = ? WHERE session_id = ? AND stampless = 1", (last, sid))
    closed = []
    for turn in turns:
        closed += chunker.feed(turn)
    progress.stampless += sum(1 for chunk in closed if not chunk.timestamp)
    rows = []
    for chunk in closed + [c for c in [chunker.pending()] if c is not None]:
        rows.append((f"{sid}:{chunk.n}", "session_chunk", chunk.text(title), chunk.timestamp or last,
                     chunk.turn_start, chunk.turn_end, int(not chunk.timestamp)))
    progress.count += len(turns)
    if record.handoff:
        rows.append((f"{sid}:handoff", "handoff", f"{title}\n{record.handoff}", last, 0, max(0, progress.count - 1), 0))
    for doc_id, doc_type, text, stamp, start, end, stampless in rows:
        cur = conn.execute(
            "INSERT INTO docs (doc_id, doc_type, session_id, title, text, timestamp, turn_start, turn_end, stampless)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc_id, doc_type, sid, title, text, stamp, start, end, stampless),
        )
        conn.execute("INSERT INTO docs_fts (rowid, text) VALUES (?, ?)", (cur.lastrowid, fts_text(text)))
    conn.executemany(
        "INSERT INTO insights VALUES (?, ?, ?, ?, ?, ?)",
        [(sid, i.turn, i.kind, i.text, i.score, i.timestamp) for i in mine_turns(turns, sid)],
    )
    if turns:
        progress.last_n = turns[-1].n
    progress.last_timestamp = last
    progress.chunker = chunker.to_dict()
    conn.execute(
        "INSERT OR REPLACE INTO sources (session_id, signature, title, last_timestamp, turns, handoff, error, file_id,"
        " indexed_bytes, progress) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
        (sid, sig, title, last, progress.count, record.handoff, file_id, indexed_bytes, progress.dumps()),
    )


def _delete_docs(conn: sqlite3.Connection, doc_ids: list[str]) -> None:
    for doc_id in doc_ids:
        found = conn.execute("SELECT rowid FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()
        if found is not None:
            conn.execute("DELETE FROM docs_fts WHERE rowid = ?", (found[0],))
            conn.execute("DELETE FROM docs WHERE rowid = ?", (found[0],))
