"""Ranked full-text search over nodes (``autology_query``), on the SQLite FTS5 index.

Score, from 0 to 1:  ``(0.45 * coverage + 0.3 * field + 0.25 * bm25 / bm25_ceiling) * status_factor``

- ``coverage`` is the share of the query's terms the node contains (stemmed, any column);
- ``field`` is 1 when a query term is in the node's title or tags, else 0: of two nodes with the
  same coverage, a title or tag match always ranks above a content-only match (BM25's column
  weights alone cannot promise that: term frequency saturates, so a content repeating a word
  many times can outscore a title holding it once);
- ``bm25`` is FTS5's BM25 with column weights title 10, tags 5, content 1, and ``bm25_ceiling``
  the most any node could score on this query, ``(k1 + 1) * sum(IDF of each term)`` with FTS5's
  own k1 and IDF: so the ratio is below 1 and depends on the node and the query only;
- ``status_factor`` is 1.0 for active, 0.9 for needs_review and 0.5 for superseded nodes, so
  superseded knowledge ranks below active knowledge of similar relevance.

Ties break by most recently modified, then id: the same store and query always give the same list.
An empty query lists nodes, most recently modified first, each with score 1.0.

Because a node's score does not depend on the other matches, the best nodes can be found without
scoring every match (a common word is in thousands of nodes): first only the nodes that have a
query term in their title or tags or have every query term; they are the answer when enough of
them score above what any other node can reach (``0.45 * (n - 1) / n + 0.25`` for n terms, 0.7
for one term); otherwise every matching node is scored. Both ways give the same list.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from autology_mcp.models import KnowledgeNode, NodeStatus
from autology_mcp.node_index import NodeIndex

COLUMN_WEIGHTS = (10.0, 1.0, 5.0)  # title, content, tags
STATUS_FACTOR = {NodeStatus.ACTIVE: 1.0, NodeStatus.NEEDS_REVIEW: 0.9, NodeStatus.SUPERSEDED: 0.5}
MAX_TERMS = 24
BM25_K1 = 1.2  # FTS5's constant (fts5_aux.c)

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
    with index.snapshot():  # counts, candidates, term matches and node data from one state of the index
        return _ranked(index, terms, node_type, tags, limit)


def bm25_ceiling(total: int, hits: list[int]) -> float:
    """The highest BM25 any node can reach: FTS5 (fts5_aux.c) sums, per term,
    ``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avg_len))`` with ``idf = log((N - n + 0.5) / (n + 0.5))``
    (1e-6 when not positive), which stays below ``idf * (k1 + 1)``."""
    ceiling = 0.0
    for n in hits:
        idf = math.log((total - n + 0.5) / (n + 0.5)) if total else 0.0
        ceiling += (BM25_K1 + 1.0) * (idf if idf > 0.0 else 1e-6)
    return ceiling


def _ranked(index: NodeIndex, terms: list[str], node_type: str | None, tags: tuple[str, ...], limit: int) -> list[Hit]:
    quoted = [_quoted(t) for t in terms]
    match = " OR ".join(quoted)
    fielded = "{title tags} : (" + match + ")"
    total, hits = index.match_counts(quoted)
    ceiling = bm25_ceiling(total, hits)
    n = len(terms)
    in_fields = set(index.rowids_for(fielded))
    # The nodes with a term in their title or tags, or with every term, can score up to 1; any other
    # node lacks a term and has none in its title or tags, so it scores below ``outside``.
    every_term = set(index.rowids_for(" AND ".join(quoted))) if n > 1 else None
    likely = sorted(in_fields | every_term) if every_term is not None else sorted(in_fields)
    outside = 0.45 * (n - 1) / n + 0.25 if n > 1 else 0.45 + 0.25
    scored = _score(index, quoted, match, likely, in_fields, every_term, ceiling, node_type, tags) if likely else []
    if len(scored) < limit or scored[limit - 1][3] <= round(outside, 4):
        scored = _score(index, quoted, match, None, in_fields, every_term, ceiling, node_type, tags)
    top = scored[:limit]
    nodes = index.nodes_by_rowid([s[0] for s in top])
    return [Hit(nodes[s[0]], s[3]) for s in top if s[0] in nodes]


def _score(
    index: NodeIndex,
    quoted: list[str],
    match: str,
    among: list[int] | None,
    in_fields: set[int],
    every_term: set[int] | None,
    ceiling: float,
    node_type: str | None,
    tags: tuple[str, ...],
) -> list[tuple[int, str, str, float]]:
    """(rowid, id, modified, score) of the matching nodes (among ``among`` when given), best first.
    ``every_term``: the nodes holding every term (None for a one-term query)."""
    rows = index.scored_rows(match, COLUMN_WEIGHTS, among, node_type, tags)
    if not rows:
        return []
    n = len(quoted)
    if every_term is None:
        matched = {r[0]: 1 for r in rows}
    else:
        # Every row holds at least one term (it matched the OR); with two terms that settles it.
        matched = {r[0]: n if r[0] in every_term else 1 for r in rows}
        partial = [rowid for rowid, count in matched.items() if count < n]
        if n > 2 and partial:
            matched.update(dict.fromkeys(partial, 0))
            for term in quoted:
                for rowid in index.rowids_matching(term, partial):
                    matched[rowid] += 1
    scored = []
    for rowid, node_id, status, modified, bm25 in rows:
        coverage = matched[rowid] / n
        field = 1.0 if rowid in in_fields else 0.0
        ratio = min(max(bm25, 0.0) / ceiling, 1.0) if ceiling > 0 else 0.0
        relevance = 0.45 * coverage + 0.3 * field + 0.25 * ratio
        scored.append((rowid, node_id, modified, round(relevance * STATUS_FACTOR[status], 4)))
    # Best score first; ties by most recently modified (the index's fixed-width UTC text), then id.
    scored.sort(key=lambda s: s[1])
    scored.sort(key=lambda s: s[2], reverse=True)
    scored.sort(key=lambda s: s[3], reverse=True)
    return scored
