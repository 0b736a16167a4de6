"""The history index: the commits HEAD reaches, searchable by what they say and the files they touched.

One SQLite database per branch and work tree, where the code index keeps its own
(``.autology/cache/history/<namespace>.sqlite``, :func:`autology_mcp.code.layout.namespace`): a
commit's text never changes, but which commits a branch reaches does. It is a cache: deleting it
loses nothing, the next search builds it again from git.

- **Kept in step with HEAD** (:meth:`HistoryIndex.sync`, before every search and after a commit):
  nothing to do when HEAD is the indexed head; when the indexed head is an ancestor of HEAD (a
  commit, a pull, a fast-forward) only the new commits are read; otherwise (another branch checked
  out in this namespace, a rebase, a reset) the set is reconciled: commits HEAD no longer reaches go,
  missing ones are read. The newest ``max_commits`` (50,000) are kept: appends may pass the bound by
  5 %, the next reconcile trims it. Nothing is fetched.
- **What is searched:** each commit's subject, body, touched files and the words of the lines it
  changed (:mod:`autology_mcp.history.text`: no trailers, no CI markers, a merge by its pull-request
  title and no changed lines, secrets redacted), FTS5 with the Porter stemmer like the node index.
  The message's score, 0 to 1: ``BM25 / ((k1 + 1) · Σ IDF · subject weight)`` over the columns
  weighted :data:`COLUMN_WEIGHTS`; the changed words' likewise over their own table; a commit's score
  combines both (:func:`combined`), times :data:`~autology_mcp.history.text.BOT_WEIGHT` for a bot's
  commit, times its recency (:func:`recency`: the older than HEAD, the less, down to 1 -
  :data:`RECENCY_WEIGHT`); ties by newest first.
- Writers take a lock file; readers never wait for them (WAL).
"""

from __future__ import annotations

import fcntl
import math
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from autology_mcp.common.errors import StorageError
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.common.query_text import without_boilerplate
from autology_mcp.common.sqlite import connect_wal, create_schema, retry_locked, schema_version
from autology_mcp.common.text import NODE_FTS_TOKENIZER, fts_text, node_query_terms
from autology_mcp.history import log, text
from autology_mcp.history.config import load_history_config

SCHEMA_VERSION = "3"  # 2: merges without a title kept as rows (not searchable); 3: the changed lines' words
COLUMN_WEIGHTS = (1.0, 1.0, 1.0)  # subject, body, files: equal (bench/history_eval.py, tuning part)
CHANGES_WEIGHT = 0.5  # a commit's score: its message's + this x its changed words' (each 0 to 1), over 1 + this
NAMED = 10  # the hits that name their matched changed words (highlighting a long text costs)
BM25_K1 = 1.2
COMMON_SHARE = 0.2  # a query word held by more than this share of the commits is not matched (the 2 rarest always are)
HOOK_COMMON_SHARE = 0.05  # the same for a hook's search, which must answer within the hooks' budget
BATCH = 2000
# A commit's score times 1 - RECENCY_WEIGHT + RECENCY_WEIGHT x exp(-its age / RECENCY_DAYS), its age the days
# between its author date and HEAD's: the commit that explains what is being worked on is more often a recent
# one (bench/history_eval.py, tuning part; the message scores the history prior reads are not weighted).
RECENCY_WEIGHT = 0.6
RECENCY_DAYS = 60.0

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits (
    rowid INTEGER PRIMARY KEY,
    sha TEXT NOT NULL UNIQUE,
    date TEXT NOT NULL,       -- the author date as git gives it (ISO 8601, with its offset)
    epoch INTEGER NOT NULL,   -- the same, in seconds: newest first breaks ties
    author TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    files TEXT NOT NULL,      -- one path per line
    merge INTEGER NOT NULL,
    bot INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS commits_fts USING fts5(subject, body, files, tokenize = '{NODE_FTS_TOKENIZER}');
-- the words of the lines each commit changed: a table of their own, so a large diff does not
-- lengthen the message's document (BM25 divides by it)
CREATE VIRTUAL TABLE IF NOT EXISTS changes_fts USING fts5(changes, tokenize = '{NODE_FTS_TOKENIZER}');
"""


@dataclass(frozen=True)
class CommitHit:
    sha: str
    date: str
    author: str
    subject: str
    body: str
    files: tuple[str, ...]
    bot: bool
    score: float
    changed: tuple[str, ...] = ()  # the names its changed lines hold that the query matched
    said: float = 0.0  # the score of its message alone (the history prior's: what it was chosen on)

    @property
    def short(self) -> str:
        return self.sha[:10]


@dataclass(frozen=True)
class SyncResult:
    head: str | None
    mode: str  # "unchanged" | "appended" | "reconciled" | "empty" | "disabled" | "not a git repository"
    added: int = 0
    removed: int = 0
    commits: int = 0
    seconds: float = 0.0


def location(root: Path) -> Path:
    """Where the history index of ``root``'s current branch and work tree lives."""
    from autology_mcp.code.config import load_index_config
    from autology_mcp.code.layout import namespace

    return ProjectPaths(Path(root)).cache / "history" / f"{namespace(Path(root), load_index_config(root))}.sqlite"


class HistoryIndex:
    def __init__(self, root: Path, path: Path | None = None):
        self.root = Path(root)
        self.path = path or location(self.root)
        self._conn: sqlite3.Connection | None = None

    # ---------------------------------------------------------------- the database

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect_wal(self.path)
            if schema_version(conn) not in (None, SCHEMA_VERSION):
                conn.close()
                for suffix in ("", "-wal", "-shm"):
                    Path(str(self.path) + suffix).unlink(missing_ok=True)
                conn = connect_wal(self.path)
            create_schema(conn, _SCHEMA, {"schema_version": SCHEMA_VERSION, "head": ""})
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _meta(self, key: str) -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else ""

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """The writers' lock (one process at a time), then one transaction."""
        lock = self.path.with_suffix(".lock")
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock, "a+")
        except OSError as exc:
            raise StorageError(str(lock), f"cannot open the history index's lock: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            retry_locked(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()

    # ---------------------------------------------------------------- keeping in step with HEAD

    def sync(self) -> SyncResult:
        """Bring the index in step with HEAD (module docstring)."""
        started = time.perf_counter()
        config = load_history_config(self.root)
        if not config.enabled:
            return SyncResult(None, "disabled")
        head = log.head(self.root)
        if head is None:
            mode = "empty" if (self.root / ".git").exists() else "not a git repository"
            return SyncResult(None, mode)
        reads = "1" if config.changed_lines else "0"  # whether the index holds the changed lines' words
        indexed = self._meta("head")
        if indexed == head and self._meta("changed_lines") == reads:
            return SyncResult(head, "unchanged", commits=self.count())
        with self._writing():
            if self._meta("changed_lines") != reads:  # the setting changed (or a new index): built again
                for table in ("commits", "commits_fts", "changes_fts"):
                    self.conn.execute(f"DELETE FROM {table}")
                self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('changed_lines', ?)", (reads,))
                self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('head', '')")
            indexed = self._meta("head")  # another process may have done it meanwhile
            if indexed == head:
                return SyncResult(head, "unchanged", commits=self.count())
            added = removed = 0
            new = log.reachable(self.root, config.max_commits, since=indexed) if indexed and \
                log.is_ancestor(self.root, indexed, head) else None
            # appended past the bound by at most 5 %: the oldest go at the next reconcile, not at every commit
            if new is not None and self.count() + len(new) <= config.max_commits * 1.05:
                added = self._insert(new, config.changed_lines)
                mode = "appended"
            else:
                wanted = log.reachable(self.root, config.max_commits)
                have = {sha: rowid for rowid, sha in self.conn.execute("SELECT rowid, sha FROM commits")}
                keep = set(wanted)
                gone = [rowid for sha, rowid in have.items() if sha not in keep]
                for at in range(0, len(gone), BATCH):
                    part = gone[at:at + BATCH]
                    marks = ",".join("?" * len(part))
                    self.conn.execute(f"DELETE FROM commits WHERE rowid IN ({marks})", part)
                    self.conn.execute(f"DELETE FROM commits_fts WHERE rowid IN ({marks})", part)
                    self.conn.execute(f"DELETE FROM changes_fts WHERE rowid IN ({marks})", part)
                removed = len(gone)
                added = self._insert([sha for sha in wanted if sha not in have], config.changed_lines)
                mode = "reconciled"
            self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('head', ?)", (head,))
            self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('searchable',"
                              " (SELECT count(*) FROM commits WHERE subject != '' OR body != ''))")
            self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('changed',"
                              " (SELECT count(*) FROM changes_fts))")
        return SyncResult(head, mode, added, removed, self.count(), round(time.perf_counter() - started, 3))

    def _insert(self, shas: list[str], changed_lines: bool = True) -> int:
        """Read and index ``shas``, :data:`BATCH` at a time (their messages and files, then, with
        ``changed_lines``, their changed lines: two ``git log`` streams per batch); the commits indexed
        with text."""
        added = 0
        for at in range(0, len(shas), BATCH):
            batch = shas[at:at + BATCH]
            changed = dict(log.changes(self.root, batch)) if changed_lines else {}
            added += self._insert_commits(log.read(self.root, shas=batch), changed)
        return added

    def _insert_commits(self, commits: Iterator[log.Commit], changed: dict[str, str]) -> int:
        added = 0
        for commit in commits:
            subject, body = text.message(commit)
            cursor = self.conn.execute(
                "INSERT OR IGNORE INTO commits (sha, date, epoch, author, subject, body, files, merge, bot)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (commit.sha, commit.date, _epoch(commit.date), commit.author, subject, body, "\n".join(commit.files),
                 int(commit.merge), int(text.is_bot(commit))),
            )
            if cursor.rowcount and (subject or body):  # a merge with nothing to say is kept, not searchable
                self.conn.execute("INSERT INTO commits_fts (rowid, subject, body, files) VALUES (?, ?, ?, ?)",
                                  (cursor.lastrowid, fts_text(subject), fts_text(body),
                                   fts_text(" ".join(commit.files).replace("/", " "))))
                words = "" if commit.merge else text.changed_words(changed.get(commit.sha, ""))
                if words:
                    self.conn.execute("INSERT INTO changes_fts (rowid, changes) VALUES (?, ?)",
                                      (cursor.lastrowid, words))
                added += 1
        return added

    def count(self) -> int:
        """The commits read (a merge with nothing to say included)."""
        return self.conn.execute("SELECT count(*) FROM commits").fetchone()[0]

    def head(self) -> str:
        """The head the index is in step with ("" before the first sync)."""
        return self._meta("head")

    def document_counts(self, terms: list[str], cap: int) -> dict[str, int]:
        """How many commits' messages and files hold each term (an FTS5 phrase each), a count stopping at
        ``cap`` (the evidence gate's: what a commit is judged by, not its changed words)."""
        return {t: self.conn.execute(
            "SELECT count(*) FROM (SELECT rowid FROM commits_fts WHERE commits_fts MATCH ? LIMIT ?)",
            ('"' + t.replace('"', '""') + '"', cap)).fetchone()[0] for t in terms}

    # ---------------------------------------------------------------- search

    def search(self, query: str, limit: int = 10, common_share: float | None = None,
               changes: bool = True) -> list[CommitHit]:
        """The commits best matching ``query``, best first (:meth:`ranked`)."""
        return self.ranked(query, limit, common_share, changes)[0]

    def ranked(self, query: str, limit: int = 10, common_share: float | None = None,
               changes: bool = True) -> tuple[list[CommitHit], list[CommitHit]]:
        """The commits best matching ``query`` (credits and pull-request numbers out), best first: the
        message's score plus :data:`CHANGES_WEIGHT` times the changed words' (each 0 to 1), over 1 +
        :data:`CHANGES_WEIGHT` (:func:`combined`), times :data:`~autology_mcp.history.text.BOT_WEIGHT`
        for a bot's, times its :func:`recency`; a word more than ``common_share`` (:data:`COMMON_SHARE`) of the commits hold is not
        matched. A hit names the words of its changed lines the query matched (``changed``; the first
        :data:`NAMED` hits). ``changes=False``: the messages alone (a hook's search: the changed words'
        table costs it about 15 ms on a 50,000-commit history). Second, the ``limit`` best by their
        messages alone (score ``said``: the history prior's order, as it was fitted)."""
        common_share = COMMON_SHARE if common_share is None else common_share
        cleaned = without_boilerplate(query)
        terms = node_query_terms(cleaned)
        if not terms:
            return [], []
        quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
        whole = ['"' + t + '"' for t in text.joined_names(cleaned)]  # snake_case names whole, as changes hold them
        depth = limit * 4
        said, _ = self._matches("commits_fts", quoted, "searchable", common_share, depth, COLUMN_WEIGHTS)
        changed, match = self._matches("changes_fts", quoted + whole, "changed", common_share, depth, (1.0,)) \
            if changes else ({}, "")
        score = {r: combined(said.get(r, 0.0), changed.get(r, 0.0)) for r in {*said, *changed}}
        wanted = list(dict.fromkeys([*sorted(score, key=lambda r: -score[r])[:depth], *said]))
        if not wanted:
            return [], []
        marks = ",".join("?" * len(wanted))
        found = {rowid: (_hit(tuple(row)), epoch) for *row, epoch, rowid in self.conn.execute(
            f"SELECT {_COLUMNS}, epoch, rowid FROM commits WHERE rowid IN ({marks})", wanted)}
        weight = {r: text.BOT_WEIGHT if hit.bot else 1.0 for r, (hit, _) in found.items()}
        now = self._head_epoch() or max(epoch for _, epoch in found.values())
        recent = {r: weight[r] * recency(now - epoch) for r, (_, epoch) in found.items()}

        def best(value: dict[int, float], by: dict[int, float]) -> list[tuple[int, float]]:  # ties newest first
            ranked = sorted(((r, round(value[r] * by[r], 4)) for r in found if r in value),
                            key=lambda rs: (-rs[1], -found[rs[0]][1], found[rs[0]][0].sha))
            return ranked[:limit]

        top = best(score, recent)
        names = self._changed_names(match, [r for r, _ in top[:NAMED] if r in changed])
        hits = [replace(found[r][0], score=value, said=round(said.get(r, 0.0) * weight[r], 4), changed=names.get(r, ()))
                for r, value in top]
        return hits, [replace(found[r][0], score=value, said=value) for r, value in best(said, weight)]

    def _head_epoch(self) -> int | None:
        """The author date, in seconds, of the head the index is in step with (None before a sync)."""
        row = self.conn.execute("SELECT epoch FROM commits WHERE sha = ?", (self.head(),)).fetchone()
        return row[0] if row else None

    def _matches(self, table: str, quoted: list[str], total_key: str, common_share: float, depth: int,
                 weights: tuple[float, ...]) -> tuple[dict[int, float], str]:
        """The ``depth`` best rows of ``table`` for the query's phrases, rowid → BM25 over the most a row
        could score (0 to 1), and the FTS5 query that matched them."""
        total = int(self._meta(total_key) or 0)  # the rows with text: what the IDFs are over
        if not total:
            return {}, ""
        counts = [self.conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (q,)).fetchone()[0]
                  for q in quoted]
        # A word a large share of the commits hold ("fix", a project's own name, "self") says little and costs
        # most: BM25 walks every commit holding it. Only the rarer words are matched (the two rarest at least).
        rare = sorted((n, i) for i, n in enumerate(counts) if n)
        keep = {i for n, i in rare if n <= common_share * total} | {i for _, i in rare[:2]}
        idfs = [max(math.log((total - counts[i] + 0.5) / (counts[i] + 0.5)), 1e-6) for i in sorted(keep)]
        ceiling = (BM25_K1 + 1.0) * sum(idfs) * max(weights)
        match = " OR ".join(q for i, q in enumerate(quoted) if i in keep)
        if not match or ceiling <= 0:
            return {}, ""
        rows = self.conn.execute(  # the best rowids by BM25 only: the caller joins what it keeps (a third faster)
            f"SELECT rowid, -bm25({table}, {', '.join(repr(float(w)) for w in weights)}) AS s FROM {table}"
            f" WHERE {table} MATCH ? ORDER BY s DESC LIMIT ?", (match, depth)).fetchall()
        return {rowid: min(1.0, s / ceiling) for rowid, s in rows}, match

    def _changed_names(self, match: str, rowids: list[int]) -> dict[int, tuple[str, ...]]:
        """The words of each commit's changed lines that ``match`` (the changed words' FTS5 query) hit."""
        if not match or not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self.conn.execute(f"SELECT rowid, highlight(changes_fts, 0, char(2), char(3)) FROM changes_fts"
                                 f" WHERE changes_fts MATCH ? AND rowid IN ({marks})", (match, *rowids))
        names = {}
        for rowid, marked in rows:
            marked_words = (w for w in marked.split() if "\x02" in w)
            # each word once, in the form first met ("Preview" and "PREVIEW" are the word "preview")
            firsts: dict[str, str] = {}
            for word in (w.replace("\x02", "").replace("\x03", "") for w in marked_words):
                firsts.setdefault(word.lower(), word)
            words = list(firsts.values())
            joined = {text.joined_name(w) for w in words if "_" in w}  # the index's one-word form: not shown
            names[rowid] = tuple(w for w in words if "_" in w or w not in joined)
        return names

    # ---------------------------------------------------------------- by sha and by file

    def commits(self, shas: list[str]) -> list[CommitHit]:
        """The indexed commits among ``shas`` (as stored: cleaned and redacted), newest first."""
        if not shas:
            return []
        marks = ",".join("?" * len(shas))
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM commits WHERE sha IN ({marks}) ORDER BY epoch DESC",
                                 shas).fetchall()
        return [_hit(r) for r in rows]

    def last_touching(self, path: str) -> CommitHit | None:
        """The newest indexed commit that touched ``path`` (None when none did)."""
        phrase = '"' + path.replace('"', '""') + '"'
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM commits WHERE rowid IN (SELECT rowid FROM commits_fts WHERE commits_fts MATCH ?)"
            " ORDER BY epoch DESC LIMIT 50",
            ("files : " + phrase,),
        ).fetchall()
        return next((hit for hit in map(_hit, rows) if path in hit.files), None)


def recency(seconds: float) -> float:
    """What a commit ``seconds`` older than HEAD keeps of its score: 1 at HEAD's date, about 0.62 two
    months older, 0.4 (1 - :data:`RECENCY_WEIGHT`) for the oldest; a commit dated after HEAD (a rebase
    keeps author dates) counts as HEAD's age."""
    return 1.0 - RECENCY_WEIGHT + RECENCY_WEIGHT * math.exp(-max(seconds, 0.0) / (RECENCY_DAYS * 86_400))


def combined(said: float, changed: float) -> float:
    """A commit's score from its message's and its changed words' (each 0 to 1), 0 to 1: their sum
    weighted, over the most it could be (not capped: a cap would tie a commit whose message holds every
    word of the query with one that holds half of them and changed them often)."""
    return (said + CHANGES_WEIGHT * changed) / (1.0 + CHANGES_WEIGHT)


_COLUMNS = "sha, date, author, subject, body, files, bot"  # a CommitHit's, in its order (:func:`_hit`)


def _hit(row: tuple) -> CommitHit:
    """A row of :data:`_COLUMNS` as a CommitHit (score 0)."""
    sha, date, author, subject, body, files, bot = row
    return CommitHit(sha, date, author, subject, body, tuple(files.split("\n")) if files else (), bool(bot), 0.0)


def _epoch(date: str) -> int:
    try:
        return int(datetime.fromisoformat(date).timestamp())
    except ValueError:
        return 0


def sync_and_search(root: Path, query: str, limit: int = 10) -> list[CommitHit]:
    """Search the history of ``root`` in step with HEAD (an index that cannot be opened or built: [])."""
    index = HistoryIndex(root)
    try:
        index.sync()
        return index.search(query, limit)
    finally:
        index.close()
