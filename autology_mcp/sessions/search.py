"""Search past sessions: the contract unified retrieval builds on.

    search_sessions(root, query, limit=20) -> list[SessionHit]   # [] when disabled, empty or no match
    sessions_enabled(root) -> bool

Score, from 0 to 1: ``min(1, max(0, 0.5 * coverage + 0.5 * bm25 / best_bm25 + boost))``

- ``coverage``: the share of the query's terms (stemmed, stop words dropped) the document holds;
- ``bm25``: FTS5's BM25 of the document, relative to the best document of this query;
- ``boost``: per document type from ``[tool.autology.sessions] boosts`` (handoff +0.08, chunk +0 by default).

A handoff whose session already has a chunk in the list is left out (it summarises those chunks in
cut excerpts and took places from chunks holding something new: on LoCoMo's tuning part, recall@5
+0.02 and MRR@10 +0.07); it stays when it is its session's only hit. (Search units of one or two
turns, ranking a chunk by its best unit, were measured too and not kept: MRR@10 +0.01 on the
tuning part for an index 64-83% larger and searches 2-2.6x slower; docs/benchmarks.md.)

No time decay: an old session ranks with a recent one of equal relevance; recency (the chunk's last
turn) only breaks ties, then the document id. Speed guard: when some query terms are rare, the very
common ones (in over 20% of more than 500 documents; their BM25 weight is near zero anyway) do not
select candidates, they only count towards coverage. Read-only with respect to transcripts: it never
ingests; it only brings the derived index in line with ``.autology/sessions/`` (cheap when nothing
changed) and rebuilds it if it is missing or damaged.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from autology_mcp.common.errors import StorageError
from autology_mcp.common.text import node_query_terms
from autology_mcp.sessions.config import SessionsConfig, load_sessions_config
from autology_mcp.common.sqlite import is_damaged
from autology_mcp.sessions.index import SessionIndex
from autology_mcp.sessions.paths import sessions_dir

LIMIT_MAX = 200
COMMON_SHARE = 0.2  # a query term in more than this share of the documents is "very common" ...
COMMON_MIN = 500  # ... when that is also more than this many documents


@dataclass(frozen=True)
class SessionHit:
    doc_id: str  # f"{session_id}:{n}" for chunks, f"{session_id}:handoff" for the handoff
    doc_type: str  # "session_chunk" | "handoff"
    session_id: str
    title: str  # the session title
    text: str  # the redacted chunk text, prefixed with the title
    score: float  # higher is better, in [0, 1], type boost applied
    timestamp: str  # ISO 8601 of the chunk's last turn (tie-break only)
    turn_start: int  # first and last turn index in the transcript: the "proof span"
    turn_end: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def sessions_enabled(root: Path) -> bool:
    """``[tool.autology.sessions] enabled`` (true by default). Raises ValidationError on a bad table."""
    return load_sessions_config(root).enabled


def search_sessions(root: Path, query: str, limit: int = 20) -> list[SessionHit]:
    """The best session documents for ``query``, best first; [] when disabled or nothing matches."""
    config = load_sessions_config(root)
    if not config.enabled or limit <= 0:
        return []
    terms = node_query_terms(query or "")
    if not terms or not sessions_dir(Path(root)).is_dir():
        return []
    index = SessionIndex.for_root(Path(root))
    dense = _dense(Path(root), query)
    try:
        return _search(index, terms, min(limit, LIMIT_MAX), config, dense)
    except sqlite3.DatabaseError as exc:  # damage found mid-query: the index is derived, rebuild it once
        if not is_damaged(exc):
            raise StorageError(str(index.path), f"cannot search the session index: {exc}") from exc
        index.rebuild()
        return _search(index, terms, min(limit, LIMIT_MAX), config, dense)


def _dense(root: Path, query: str):
    """The dense channel's scores when semantic recall is on here (issue 31); None, and nothing imported,
    when it is off (the default)."""
    from autology_mcp.semantic.state import enabled_here

    if not enabled_here(root):
        return None
    from autology_mcp.sessions.semantic import dense_scores

    return dense_scores(root, query)


def document_counts(root: Path, terms: list[str], cap: int) -> dict[str, int]:
    """How many session documents hold each term, a count stopping at ``cap`` ({} when session memory is
    off or empty): the evidence gate's statistics."""
    if not terms or not load_sessions_config(root).enabled or not sessions_dir(Path(root)).is_dir():
        return {}
    with SessionIndex.for_root(Path(root)).reading() as conn:
        return {term: conn.execute("SELECT count(*) FROM (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)",
                                   (_quoted(term), cap)).fetchone()[0] for term in terms}


def _quoted(term: str) -> str:
    """A term as an FTS5 string (so words like OR or NEAR are plain words)."""
    return '"' + term.replace('"', '""') + '"'


def _common_terms(conn: sqlite3.Connection, terms: list[str]) -> set[str]:
    """The terms found in more than COMMON_SHARE of the documents (and more than COMMON_MIN of them)."""
    total = conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
    cap = max(COMMON_MIN, int(total * COMMON_SHARE))
    if len(terms) < 2 or total <= cap:
        return set()
    common = set()
    for term in terms:
        found = conn.execute(
            "SELECT COUNT(*) FROM (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)", (_quoted(term), cap + 1)
        ).fetchone()[0]
        if found > cap:
            common.add(term)
    return common


def _search(index: SessionIndex, terms: list[str], limit: int, config: SessionsConfig, dense=None) -> list[SessionHit]:
    return without_repeated_handoffs(ranked_documents(index, terms, limit, config, dense), limit)


def ranked_documents(index: SessionIndex, terms: list[str], limit: int, config: SessionsConfig,
                     dense=None) -> list[SessionHit]:
    """Every candidate document scored and sorted, handoffs included (``limit`` sizes the candidate pool).
    With ``dense`` (:class:`~autology_mcp.sessions.semantic.DenseScores`), the chunks of the query's nearest
    turns join the candidates and the dense similarities are fused into the score."""
    pool = limit * 4 + 40
    with index.reading() as conn:
        common = _common_terms(conn, terms)
        rare = [t for t in terms if t not in common] or terms
        match = " OR ".join(_quoted(t) for t in rare)
        candidates = conn.execute(
            "SELECT rowid, -bm25(docs_fts) FROM docs_fts WHERE docs_fts MATCH ? ORDER BY bm25(docs_fts) LIMIT ?",
            (match, pool),
        ).fetchall()
        lexical = {c[0] for c in candidates}
        if dense is not None:
            candidates += _nearest_chunks(conn, dense, set(lexical))
        if not candidates:
            return []
        rowids = [c[0] for c in candidates]
        marks = ",".join("?" * len(rowids))
        matched = dict.fromkeys(rowids, 0)
        if len(terms) > 1:
            listed = json.dumps(rowids)
            for term in terms:
                # ``+rowid``: walk the term's matches once, keeping the listed ones (no FTS5 seek per
                # rowid); a very common term is walked only where the candidates' rare terms are
                expression = _quoted(term) if term not in common or rare == terms else f"{_quoted(term)} AND ({match})"
                for (rowid,) in conn.execute(
                    "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))",
                    (expression, listed),
                ):
                    matched[rowid] += 1
        else:
            matched = {rowid: int(rowid in lexical) for rowid in rowids}
        docs = {
            row[0]: row
            for row in conn.execute(
                "SELECT rowid, doc_id, doc_type, session_id, title, text, timestamp, turn_start, turn_end"
                f" FROM docs WHERE rowid IN ({marks})",
                rowids,
            )
        }
    best = max(c[1] for c in candidates) or 1.0
    fused, scale = dense.fused({r: (row[3], row[7], row[8]) for r, row in docs.items() if row[2] == "session_chunk"}) \
        if dense is not None else ({}, 1.0)
    hits = []
    for rowid, bm25 in candidates:
        row = docs.get(rowid)
        if row is None:
            continue
        relevance = 0.5 * matched[rowid] / len(terms) + 0.5 * max(bm25, 0.0) / best
        if fused:
            relevance = (relevance + fused.get(rowid, 0.0)) / scale
        score = round(min(1.0, max(0.0, relevance + config.boosts.get(row[2], 0.0))), 4)
        hits.append(SessionHit(row[1], row[2], row[3], row[4], row[5], score, row[6], row[7], row[8]))
    hits.sort(key=lambda h: h.doc_id)
    hits.sort(key=lambda h: h.timestamp, reverse=True)
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits


def _nearest_chunks(conn: sqlite3.Connection, dense, known: set[int]) -> list[tuple[int, float]]:
    """The chunks holding the query's nearest turns, not yet among the candidates (lexical score 0)."""
    from autology_mcp.sessions.semantic import NEAREST_TURNS

    found: list[tuple[int, float]] = []
    for session_id, turn in dense.nearest_turns(NEAREST_TURNS):
        for (rowid,) in conn.execute(
            "SELECT rowid FROM docs WHERE session_id = ? AND doc_type = 'session_chunk' AND turn_start <= ? "
            "AND turn_end >= ?", (session_id, turn, turn),
        ):
            if rowid not in known:
                known.add(rowid)
                found.append((rowid, 0.0))
    return found


def without_repeated_handoffs(hits: list[SessionHit], limit: int) -> list[SessionHit]:
    """The first ``limit`` hits, leaving out a handoff whose session already has a chunk among them:
    the handoff summarises those chunks (often in cut excerpts), so it would take a place from a
    chunk that holds something new. A handoff stays when it is the only hit of its session."""
    listed = {h.session_id for h in [h for h in hits if h.doc_type != "handoff"][:limit]}
    return [h for h in hits if h.doc_type != "handoff" or h.session_id not in listed][:limit]
