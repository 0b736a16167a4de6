"""Ranked full-text search over nodes (``autology_query``), on the SQLite FTS5 index.

Score, from 0 to 1:  ``(bm25 + label) / (bm25_ceiling + label_ceiling) * status_factor``

- ``bm25`` is FTS5's BM25 over the whole node (title, content and tags alike), with its IDF over
  all nodes: how strongly the node is about the query's distinctive words;
- ``label`` adds, for each query term in the node's title, that term's IDF *among titles*, and for
  each term in its tags, its IDF among tags. A word most nodes mention but few titles carry
  ("defaults", "metadata") is common in content and telling in a title; a word common in titles too
  ("python", "support") earns little there. This is what lets "type variable defaults" find the
  record titled "Type Defaults for Type Parameters" among 700 records that all talk about types;
- the ceilings are the most any node could score on this query: ``(k1 + 1) * sum(IDF)`` for FTS5's
  BM25 (its own k1 and IDF), and the sum of the title and tag IDFs of the terms some title or tag
  holds; so a score depends on the node and the query only, never on the other matches;
- ``status_factor`` is 1.0 for active, 0.9 for needs_review and 0.5 for superseded nodes, so
  superseded knowledge ranks below active knowledge of similar relevance.

Measured on real records nobody here wrote (bench/records_eval.py: 736 PEPs, queried by 189
changelog entries of four projects that cite them) and on BrighterCommand/Brighter's ADRs
(bench/mixed_store_eval.py); the figures are in docs/retrieval.md. The score this replaced
(``0.45 * coverage + 0.3 * field + 0.25 * bm25 / ceiling``) ranked below plain BM25 there.

Ties break by most recently modified, then id: the same store and query always give the same list.
An empty query lists nodes, most recently modified first, each with score 1.0.

SQLite computes BM25 + label for every match and sorts; only the best rows come back to Python,
which applies the status factor (it only lowers a score) and fetches more only if a row left
behind could still enter the list. That is exactly the list scoring every match gives
(tests/test_search.py checks it against a brute-force scorer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from autology_mcp.common.text import node_query_terms
from autology_mcp.knowledge.models import KnowledgeNode, NodeStatus
from autology_mcp.knowledge.node_index import NodeIndex

COLUMN_WEIGHTS = (1.0, 1.0, 1.0)  # title, content, tags: BM25 over the node as one text
STATUS_FACTOR = {NodeStatus.ACTIVE: 1.0, NodeStatus.NEEDS_REVIEW: 0.9, NodeStatus.SUPERSEDED: 0.5}
BM25_K1 = 1.2  # FTS5's constant (fts5_aux.c)
LABEL_WEIGHTS = (1.0, 0.5)  # what a title term, a tag term adds, times its IDF among titles, tags


@dataclass(frozen=True)
class Hit:
    node: KnowledgeNode
    score: float


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def search_nodes(
    index: NodeIndex, query: str, node_type: str | None = None, tags: tuple[str, ...] = (), limit: int = 10
) -> list[Hit]:
    terms = node_query_terms(query or "")
    if not terms:
        if (query or "").strip():  # something was asked, but nothing in it is searchable (only '🚀' or '?')
            return []
        return [Hit(node, 1.0) for node in index.recent(node_type, tags, limit)]
    with index.snapshot():  # counts, candidates, term matches and node data from one state of the index
        return _ranked(index, terms, node_type, tags, limit)


def term_idfs(total: int, hits: list[int]) -> list[float]:
    """FTS5's IDF of each term (fts5_aux.c): ``log((N - n + 0.5) / (n + 0.5))``, 1e-6 when not positive."""
    idfs = []
    for n in hits:
        idf = math.log((total - n + 0.5) / (n + 0.5)) if total else 0.0
        idfs.append(idf if idf > 0.0 else 1e-6)
    return idfs


def bm25_ceiling(idfs: list[float]) -> float:
    """The highest BM25 any node can reach: FTS5 sums, per term,
    ``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avg_len))``, which stays below ``idf * (k1 + 1)``."""
    return (BM25_K1 + 1.0) * sum(idfs)


def label_scores(index: NodeIndex, quoted: list[str], total: int) -> tuple[dict[int, float], float]:
    """What each node's title and tags add (rowid -> sum over the query terms it holds there of the
    term's IDF among titles, or among tags, times :data:`LABEL_WEIGHTS`), and the most any node
    could get (the sum over the terms some title, some tag holds)."""
    scores: dict[int, float] = {}
    ceiling = 0.0
    for field, weight in zip(("title", "tags"), LABEL_WEIGHTS):
        rows = [index.rowids_for("{" + field + "} : " + q) for q in quoted]
        for found, idf in zip(rows, term_idfs(total, [len(r) for r in rows])):
            if found:
                ceiling += weight * idf
                for rowid in found:
                    scores[rowid] = scores.get(rowid, 0.0) + weight * idf
    return scores, ceiling


def _ranked(index: NodeIndex, terms: list[str], node_type: str | None, tags: tuple[str, ...], limit: int) -> list[Hit]:
    quoted = [_quoted(t) for t in terms]
    total, hits = index.match_counts(quoted)
    bonus, label_ceiling = label_scores(index, quoted, total)
    ceiling = bm25_ceiling(term_idfs(total, hits)) + label_ceiling
    if ceiling <= 0.0:
        return []
    # SQLite ranks by BM25 + label, the score before the status factor, which only lowers it: once
    # the limit-th exact score beats the last row fetched, no row left behind can enter the list.
    fetch = limit + 10
    while True:
        rows = index.ranked_rows(" OR ".join(quoted), COLUMN_WEIGHTS, bonus, node_type, tags, fetch)
        scored = _ordered([
            (rowid, node_id, modified, round(min((max(bm25, 0.0) + label) / ceiling, 1.0) * STATUS_FACTOR[status], 4))
            for rowid, node_id, status, modified, bm25, label in rows
        ])
        if len(rows) < fetch:
            return _hits(index, scored[:limit])
        bound = round(min((max(rows[-1][4], 0.0) + rows[-1][5]) / ceiling, 1.0), 4)
        if scored[limit - 1][3] > bound:
            return _hits(index, scored[:limit])
        fetch *= 4


def _hits(index: NodeIndex, top: list[tuple[int, str, str, float]]) -> list[Hit]:
    nodes = index.nodes_by_rowid([s[0] for s in top])
    return [Hit(nodes[s[0]], s[3]) for s in top if s[0] in nodes]


def _ordered(scored: list[tuple[int, str, str, float]]) -> list[tuple[int, str, str, float]]:
    """Best score first; ties by most recently modified (the index's fixed-width UTC text), then id."""
    scored.sort(key=lambda s: s[1])
    scored.sort(key=lambda s: s[2], reverse=True)
    scored.sort(key=lambda s: s[3], reverse=True)
    return scored
