"""Ranked full-text search over nodes (``autology_query``), on the SQLite FTS5 index.

Score, from 0 to 1:  ``(0.45 * coverage + 0.3 * field + 0.25 * bm25 / best_bm25) * status_factor``

- ``coverage`` is the share of the query's terms the node contains (stemmed, any column);
- ``field`` is 1 when a query term is in the node's title or tags, else 0: of two nodes with the
  same coverage, a title or tag match always ranks above a content-only match (BM25's column
  weights alone cannot promise that: term frequency saturates, so a content repeating a word
  many times can outscore a title holding it once);
- ``bm25`` is FTS5's BM25 with column weights title 10, tags 5, content 1, relative to the best
  candidate of this query;
- ``status_factor`` is 1.0 for active, 0.9 for needs_review and 0.5 for superseded nodes, so
  superseded knowledge ranks below active knowledge of similar relevance.

Ties break by most recently modified, then id: the same store and query always give the same list.
An empty query lists nodes, most recently modified first, each with score 1.0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autology_mcp.models import KnowledgeNode, NodeStatus
from autology_mcp.node_index import NodeIndex

COLUMN_WEIGHTS = (10.0, 1.0, 5.0)  # title, content, tags
STATUS_FACTOR = {NodeStatus.ACTIVE: 1.0, NodeStatus.NEEDS_REVIEW: 0.9, NodeStatus.SUPERSEDED: 0.5}
MAX_TERMS = 24

STOP_WORDS = frozenset(
    """a an and are as at be but by do does did for from has have how i if in into is it its of on or our
    so that the their them then there these this those to was we were what when where which who why will
    with you your""".split()
)

_TERM = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    node: KnowledgeNode
    score: float


def query_terms(query: str) -> list[str]:
    """Lowercased word terms of the query, stop words dropped (unless nothing else is left)."""
    words = [w.lower() for w in _TERM.findall(query)]
    terms = [w for w in words if w not in STOP_WORDS] or words
    return list(dict.fromkeys(terms))[:MAX_TERMS]


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def search_nodes(
    index: NodeIndex, query: str, node_type: str | None = None, tags: tuple[str, ...] = (), limit: int = 10
) -> list[Hit]:
    terms = query_terms(query or "")
    if not terms:
        return [Hit(node, 1.0) for node in index.recent(node_type, tags, limit)]
    match = " OR ".join(_quoted(t) for t in terms)
    with index.snapshot():  # candidates, term matches and node data from one state of the index
        return _ranked(index, terms, match, node_type, tags, limit)


def _ranked(
    index: NodeIndex, terms: list[str], match: str, node_type: str | None, tags: tuple[str, ...], limit: int
) -> list[Hit]:
    pool = limit * 4 + 40
    candidates = index.search_candidates(match, node_type, tags, pool, COLUMN_WEIGHTS)
    if not candidates:
        return []
    best = max(c[4] for c in candidates) or 1.0
    # Title and tag matches rank first, so they must be candidates even when BM25 put many content
    # matches above them (see ``field``). One left out of a full pool scores at most the pool's
    # cut-off: use that (the score of the column-filtered query has its own, larger IDF).
    if len(candidates) == pool:
        in_pool = {c[0] for c in candidates}
        cutoff = min(c[4] for c in candidates)
        fielded = index.search_candidates("{title tags} : (" + match + ")", node_type, tags, pool, COLUMN_WEIGHTS)
        candidates += [(*c[:4], cutoff) for c in fielded if c[0] not in in_pool]
    rowids = [c[0] for c in candidates]
    if len(terms) > 1:
        matched = dict.fromkeys(rowids, 0)
        for term in terms:
            for rowid in index.rowids_matching(_quoted(term), rowids):
                matched[rowid] += 1
    else:
        matched = dict.fromkeys(rowids, 1)
    in_fields = index.rowids_matching("{title tags} : (" + match + ")", rowids)
    scored = []
    for rowid, node_id, status, modified, bm25 in candidates:
        coverage = matched[rowid] / len(terms)
        field = 1.0 if rowid in in_fields else 0.0
        relevance = 0.45 * coverage + 0.3 * field + 0.25 * max(bm25, 0.0) / best
        scored.append((rowid, node_id, modified, round(relevance * STATUS_FACTOR[status], 4)))
    # Best score first; ties by most recently modified (the index's fixed-width UTC text), then id.
    scored.sort(key=lambda s: s[1])
    scored.sort(key=lambda s: s[2], reverse=True)
    scored.sort(key=lambda s: s[3], reverse=True)
    top = scored[:limit]
    nodes = index.nodes_by_rowid([s[0] for s in top])
    return [Hit(nodes[s[0]], s[3]) for s in top if s[0] in nodes]
