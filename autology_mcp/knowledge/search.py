"""Ranked full-text search over nodes (``autology_query``), on the SQLite FTS5 index.

Score, from 0 to 1:  ``(0.45 * coverage + 0.3 * field + 0.25 * bm25 / bm25_ceiling) * status_factor``

- each query term has a share, its IDF over the sum of the query terms' IDFs (FTS5's IDF), so a rare
  word counts more than a common one, and a long question is not won by a node sharing one
  everyday word in its title;
- ``coverage`` is the sum of the shares of the terms the node contains (stemmed, any column);
- ``field`` is the sum of the shares of the terms in the node's title or tags: for a one-term query,
  a title or tag match always ranks above a content-only match (BM25's column weights alone cannot
  promise that: term frequency saturates, so a content repeating a word many times can outscore a
  title holding it once);
- ``bm25`` is FTS5's BM25 with column weights title 10, tags 5, content 1, and ``bm25_ceiling``
  the most any node could score on this query, ``(k1 + 1) * sum(IDF of each term)`` with FTS5's
  own k1 and IDF: so the ratio is below 1 and depends on the node and the query only;
- ``status_factor`` is 1.0 for active, 0.9 for needs_review and 0.5 for superseded nodes, so
  superseded knowledge ranks below active knowledge of similar relevance.

Ties break by most recently modified, then id: the same store and query always give the same list.
An empty query lists nodes, most recently modified first, each with score 1.0.

A node's score does not depend on the other matches, so the best nodes are found without scoring
every match (a common word is in thousands of nodes). BM25 / ceiling is below a node's coverage and
field is at most its coverage, which bounds what unscored nodes can reach:

1. score the nodes with every term and one in their title or tags; any other node lacks a term
   (scores below 1 - the smallest share) or has no title/tag term (below 0.7): if the limit-th
   score beats both, the list is final;
2. add the nodes with a term in their title or tags or with every term; any other node scores
   below 0.7 * (1 - the smallest share);
3. otherwise add the nodes holding a term outside the commonest terms whose shares add up to less
   than (limit-th score / 0.7), since a node holding only those cannot enter the list (every
   match, when no term can be set aside).

Each step gives exactly the list that scoring every match gives (tests/test_search.py checks it
against a brute-force scorer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from autology_mcp.common.text import node_query_terms
from autology_mcp.knowledge.models import KnowledgeNode, NodeStatus
from autology_mcp.knowledge.node_index import NodeIndex

COLUMN_WEIGHTS = (10.0, 1.0, 5.0)  # title, content, tags
STATUS_FACTOR = {NodeStatus.ACTIVE: 1.0, NodeStatus.NEEDS_REVIEW: 0.9, NodeStatus.SUPERSEDED: 0.5}
BM25_K1 = 1.2  # FTS5's constant (fts5_aux.c)

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


def _ranked(index: NodeIndex, terms: list[str], node_type: str | None, tags: tuple[str, ...], limit: int) -> list[Hit]:
    quoted = [_quoted(t) for t in terms]
    match = " OR ".join(quoted)
    total, hits = index.match_counts(quoted)
    idfs = term_idfs(total, hits)
    shares = [idf / sum(idfs) for idf in idfs]  # each term's weight in coverage and field: rarer counts more
    ceiling = bm25_ceiling(idfs)
    n = len(terms)
    in_title_tags = [set(index.rowids_for("{title tags} : " + q)) for q in quoted]
    in_fields = set().union(*in_title_tags)
    every_term = set(index.rowids_for(" AND ".join(quoted))) if n > 1 else None
    args = (quoted, shares, in_title_tags, every_term, ceiling, node_type, tags)

    def kth(scored: list[tuple[int, str, str, float]]) -> float:
        return scored[limit - 1][3] if len(scored) >= limit else 0.0

    # Bounds used below: BM25 / ceiling is below a node's coverage (each term adds less than
    # (k1 + 1) * idf) and field is at most its coverage, so a node lacking a term scores below its
    # coverage, at most 1 - the smallest share; with no term in its title or tags, below 0.7 * coverage.
    scored: list[tuple[int, str, str, float]] = []
    first: set[int] = set()
    if every_term is not None:
        # Step 1: the nodes with every term and one in their title or tags. Any other node lacks a
        # term or has none in its title or tags (then it scores below 0.45 + 0.25 = 0.7).
        first = in_fields & every_term
        scored = _score(index, match, sorted(first), *args) if first else []
        if kth(scored) > round(max(0.7, 1.0 - min(shares)), 4):
            return _hits(index, scored[:limit])
    # Step 2: the nodes with a query term in their title or tags, or with every term. Any other
    # node has no term in its title or tags and lacks a term: below 0.7 * (1 - the smallest share).
    likely = in_fields | every_term if every_term is not None else in_fields
    pending = likely - first
    if pending and kth(scored) > 0.0:
        # Only those whose own bound beats the limit-th score so far (a tie could still win).
        pending = {r for r in pending if round(_bound(r, shares, in_title_tags, every_term), 4) >= kth(scored)}
    if pending:
        scored = _ordered(scored + _score(index, match, sorted(pending), *args))
    if kth(scored) <= round(0.7 * (1.0 - min(shares) if n > 1 else 1.0), 4):
        # Step 3: a node holding only the commonest terms, whose shares add up to less than the
        # current limit-th score / 0.7, cannot enter the list; score the nodes holding another term.
        common, total_share = set(), 0.0
        for i in sorted(range(n), key=lambda i: (shares[i], i)):
            if round(0.7 * (total_share + shares[i]), 4) >= kth(scored):
                break
            common.add(i)
            total_share += shares[i]
        if common:
            rest = set(index.rowids_for(" OR ".join(q for i, q in enumerate(quoted) if i not in common)))
            if rest - likely:
                scored = _ordered(scored + _score(index, match, sorted(rest - likely), *args))
        else:
            scored = _score(index, match, None, *args)
    return _hits(index, scored[:limit])


def _bound(rowid: int, shares: list[float], in_title_tags: list[set[int]], every_term: set[int] | None) -> float:
    """The most a node can score given its title/tag terms: field is known; coverage is 1 with
    every term, else at most 1 - the smallest share of a term outside its title and tags; BM25 /
    ceiling is below coverage."""
    in_title = [rowid in rows for rows in in_title_tags]
    field = sum(share for share, hit in zip(shares, in_title) if hit)
    if every_term is None or rowid in every_term:
        return 0.7 + 0.3 * field
    coverage = 1.0 - min(share for share, hit in zip(shares, in_title) if not hit)
    return 0.7 * coverage + 0.3 * field


def _hits(index: NodeIndex, top: list[tuple[int, str, str, float]]) -> list[Hit]:
    nodes = index.nodes_by_rowid([s[0] for s in top])
    return [Hit(nodes[s[0]], s[3]) for s in top if s[0] in nodes]


def _score(
    index: NodeIndex,
    match: str,
    among: list[int] | None,
    quoted: list[str],
    shares: list[float],
    in_title_tags: list[set[int]],
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
    coverage = dict.fromkeys((r[0] for r in rows), 1.0)
    partial = [r[0] for r in rows if every_term is not None and r[0] not in every_term]
    if partial:
        # A row lacking some term: add up the shares of the terms it has. It holds at least one
        # (it matched the OR), so with two terms one lookup settles which.
        coverage.update(dict.fromkeys(partial, 0.0))
        checked = quoted if len(quoted) > 2 else quoted[:1]
        for i, term in enumerate(checked):
            having = index.rowids_matching(term, partial)
            for rowid in having:
                coverage[rowid] += shares[i]
            if len(quoted) == 2:
                for rowid in partial:
                    if rowid not in having:
                        coverage[rowid] += shares[1]
    scored = []
    for rowid, node_id, status, modified, bm25 in rows:
        field = sum(share for share, rows_ in zip(shares, in_title_tags) if rowid in rows_)
        ratio = min(max(bm25, 0.0) / ceiling, 1.0) if ceiling > 0 else 0.0
        relevance = 0.45 * min(coverage[rowid], 1.0) + 0.3 * min(field, 1.0) + 0.25 * ratio
        scored.append((rowid, node_id, modified, round(relevance * STATUS_FACTOR[status], 4)))
    return _ordered(scored)


def _ordered(scored: list[tuple[int, str, str, float]]) -> list[tuple[int, str, str, float]]:
    """Best score first; ties by most recently modified (the index's fixed-width UTC text), then id."""
    scored.sort(key=lambda s: s[1])
    scored.sort(key=lambda s: s[2], reverse=True)
    scored.sort(key=lambda s: s[3], reverse=True)
    return scored
