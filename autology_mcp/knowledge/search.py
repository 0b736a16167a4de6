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
An empty query lists nodes, most recently modified first, with no score (None): a listing ranks
nothing, and a made-up 1.0 would read as "fully relevant".

How: below PRUNE_FROM_MATCHES term matches, SQLite computes BM25 + label for every match and sorts;
only the best rows come back to Python, which applies the status factor (it only lowers a score)
and fetches more only if a row left behind could still enter the list. Above, only the nodes that
can still enter the list are scored (:func:`_pruned`: exact bounds, see there and docs/retrieval.md).
Either way the list is exactly the one scoring every match gives (tests/test_search.py checks both
against a brute-force scorer and against each other).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

from autology_mcp.common.query_text import identifier_words, without_boilerplate
from autology_mcp.common.text import node_query_terms
from autology_mcp.knowledge.models import KnowledgeNode, NodeStatus
from autology_mcp.knowledge.node_index import NodeIndex

COLUMN_WEIGHTS = (1.0, 1.0, 1.0)  # title, content, tags: BM25 over the node as one text
STATUS_FACTOR = {NodeStatus.ACTIVE: 1.0, NodeStatus.NEEDS_REVIEW: 0.9, NodeStatus.SUPERSEDED: 0.5}
BM25_K1 = 1.2  # FTS5's constant (fts5_aux.c)
# What a query term held in each label field adds, times its IDF among that field (title and tags
# first: their bits say which terms a node surely holds, for the pruned path's bounds). Fitted on the
# tuning part of bench/gate_eval.py's record domains (docs/retrieval.md, issue 37).
LABEL_WEIGHTS = {"title": 1.0, "tags": 0.5, "compounds": 1.0, "identifiers": 0.5}
IDENTIFIER_WEIGHT = 1.5  # a term of an identifier the query names (query_text.identifier_words): its labels count 1.5 times
PRUNE_FROM_MATCHES = 2000  # below this many term matches in all, scoring every match is as quick
SEED_LABELLED = 200  # scored first to find the threshold: this many + 4 * limit of the best-labelled nodes,
SEED_EXTRA = 20  # and the first limit + this many nodes holding every term
SEED_ALL_HOLDING_EVERY = 300  # or all of those if the terms' counts make about this many likely
BOUND_SLACK = 1e-9  # relative: FTS5's floating-point sum may round a BM25 a hair above its exact value
# Semantic recall on (semantic/nodes.py): the best DENSE_DEPTH lexical matches are re-ranked, the
# similarity weighing DENSE_WEIGHT against the lexical score's 1. Chosen on the tuning part of
# bench/gate_eval.py's record domains with all-MiniLM-L6-v2 (docs/retrieval.md, issue 37).
DENSE_DEPTH = 40
DENSE_WEIGHT = 0.5
Similarity = Callable[[list[str]], dict[str, float]]  # node ids -> their similarity to the query (those it knows)
REQUIREMENT_EXACT_TERMS = 6  # up to this many terms, the smallest reaching sets exactly; above, MaxScore's split


@dataclass(frozen=True)
class Hit:
    node: KnowledgeNode
    score: float | None  # None: no search text, a listing of the most recent nodes


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def search_nodes(
    index: NodeIndex, query: str, node_type: str | None = None, tags: tuple[str, ...] = (), limit: int = 10,
    dense: Callable[[str], Similarity | None] | None = None,
) -> list[Hit]:
    """The nodes best matching ``query`` (the module's docstring). ``dense``, when given, is asked for the
    query's similarity to the nodes (semantic recall: :func:`autology_mcp.semantic.nodes.dense_for`, which
    the edges and unified retrieval pass) and, when it has one, the best :data:`DENSE_DEPTH` lexical
    matches are re-ranked by it (:func:`dense_reranked`)."""
    query = without_boilerplate(query or "")
    terms = node_query_terms(query)
    if not terms:
        if query.strip():  # something was asked, but nothing in it is searchable (only '🚀' or '?')
            return []
        return [Hit(node, None) for node in index.recent(node_type, tags, limit)]
    named = set(identifier_words(query))
    weights = [IDENTIFIER_WEIGHT if t in named else 1.0 for t in terms]
    similarity = dense(query) if dense is not None else None
    depth = max(limit, DENSE_DEPTH) if similarity is not None else limit
    with index.snapshot():  # counts, candidates, term matches and node data from one state of the index
        hits = _ranked(index, terms, node_type, tags, depth, weights)
    return dense_reranked(hits, similarity)[:limit] if similarity is not None else hits


def dense_reranked(hits: list[Hit], similarity: Similarity) -> list[Hit]:
    """``hits`` (lexical, best first) re-ranked with their similarity to the query: each score becomes
    ``(lexical + DENSE_WEIGHT * dense * status factor) / (1 + DENSE_WEIGHT)``, still from 0 to 1, where
    ``dense`` is the node's cosine above the candidates' mean, divided by the best's (so a model whose
    unrelated texts sit at cosine 0.5 and one whose sit near 0 weigh the same). Unchanged when some
    candidate has no vector yet (a node written a moment ago): lexical order rather than one unfairly last."""
    sims = similarity([h.node.id for h in hits])
    if not hits or len(sims) < len(hits):
        return hits
    mean = sum(sims.values()) / len(sims)
    span = max(sims.values()) - mean
    if span <= 1e-6:  # the candidates are all as near the query: the vectors cannot tell them apart
        return hits
    rescored = [Hit(h.node, round((h.score + DENSE_WEIGHT * STATUS_FACTOR[h.node.status] *
                                   max(sims[h.node.id] - mean, 0.0) / span) / (1.0 + DENSE_WEIGHT), 4))
                for h in hits]
    return sorted(rescored, key=lambda h: -h.score)  # stable: ties keep the lexical order


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


def label_scores(
    index: NodeIndex, quoted: list[str], total: int, known: dict[int, int] | None = None,
    weights: list[float] | None = None,
) -> tuple[dict[int, float], float]:
    """What each node's labels add (rowid -> sum, over the query terms and the label fields of
    :data:`LABEL_WEIGHTS` that hold them, of the term's IDF among that field times the field's weight
    and the term's ``weights``), and the most any node could get (the sum over the terms and fields
    some node holds them in). ``known``, if given, gets for each of those nodes the terms its title or
    tags hold (bit i: ``quoted[i]``): terms it surely holds in the full-text index too."""
    n = len(quoted)
    fields = list(LABEL_WEIGHTS)
    found = [index.label_rowids("{" + field + "} : " + q) for field in fields for q in quoted]
    pattern: dict[int, int] = {}  # rowid -> bit i: found[i] holds it (fields in order, terms in order within)
    adds: list[float] = []  # what found[i] adds
    ceiling = 0.0
    for i, (rowids, idf) in enumerate(zip(found, term_idfs(total, [len(r) for r in found]))):
        adds.append(LABEL_WEIGHTS[fields[i // n]] * idf * (weights[i % n] if weights else 1.0))
        if rowids and adds[i] > 0.0:
            ceiling += adds[i]
            bit = 1 << i
            for rowid in rowids:
                pattern[rowid] = pattern.get(rowid, 0) | bit
    values: dict[int, float] = {}
    for bits in set(pattern.values()):
        value = 0.0  # summed in the order above (fields, then terms): the same float always
        for i, add in enumerate(adds):
            if bits >> i & 1:
                value += add
        values[bits] = value
    if known is not None:
        every = (1 << n) - 1  # the title's bits, or the tags' shifted onto them; the other fields' cut off
        known.update((rowid, (bits | bits >> n) & every) for rowid, bits in pattern.items())
    return {rowid: values[bits] for rowid, bits in pattern.items()}, ceiling


def _ranked(index: NodeIndex, terms: list[str], node_type: str | None, tags: tuple[str, ...], limit: int,
            weights: list[float] | None = None) -> list[Hit]:
    quoted = [_quoted(t) for t in terms]
    total, hits = index.match_counts(quoted)
    idfs = term_idfs(total, hits)
    known: dict[int, int] = {}
    bonus, label_ceiling = label_scores(index, quoted, total, known, weights)
    ceiling = bm25_ceiling(idfs) + label_ceiling
    if ceiling <= 0.0:
        return []
    query = _Query(quoted, total, hits, idfs, bonus, known, ceiling, node_type, tags, limit)
    top = _pruned(index, query) if sum(hits) >= PRUNE_FROM_MATCHES else None
    if top is None:
        top = _best(index, query, " OR ".join(quoted), bonus, None)
    return _hits(index, top)


_Row = tuple[int, str, str, float]  # rowid, id, modified, score as returned


@dataclass(frozen=True)
class _Query:
    quoted: list[str]
    total: int  # nodes indexed
    hits: list[int]  # nodes holding each term
    idfs: list[float]
    bonus: dict[int, float]
    known: dict[int, int]  # rowid -> the terms its title or tags hold (bit i: quoted[i])
    ceiling: float
    node_type: str | None
    tags: tuple[str, ...]
    limit: int

    def score(self, bm25: float, label: float, status: str) -> float:
        """The score a row gets (the formula in this module's docstring), rounded as returned."""
        return round(min((max(bm25, 0.0) + label) / self.ceiling, 1.0) * STATUS_FACTOR[status], 4)

    def best_case(self, bm25: float, label: float) -> float:
        """The score of a row at the best status (factor 1.0): the most a row not yet read can get."""
        return self.score(bm25, label, NodeStatus.ACTIVE)

    def reachable(self, most: float, theta: float) -> bool:
        """Whether a node whose BM25 + label is below ``most`` can still score ``theta`` (rounded, best
        status). The slack covers floating-point rounding in FTS5's own sum."""
        return round(min(most * (1.0 + BOUND_SLACK) / self.ceiling, 1.0), 4) >= theta


def _best(
    index: NodeIndex,
    query: _Query,
    match: str,
    bonus: dict[int, float],
    among: tuple[list[int], str | None] | None,
    scored: list[_Row] = (),  # type: ignore[assignment]
) -> list[_Row]:
    """The ``limit`` best of the nodes matching ``match`` (and ``among``) and of ``scored`` (rows
    already scored, none of them left out here by ``among``), ordered as returned.

    SQLite ranks by BM25 + label, the score before the status factor, which only lowers it: once the
    limit-th exact score beats the last row fetched, no row left behind can enter the list."""
    limit = query.limit
    fetch = limit + 10
    while True:
        rows = index.ranked_rows(match, COLUMN_WEIGHTS, bonus, query.node_type, query.tags, fetch, among)
        found = {s[0]: s for s in scored}
        for rowid, node_id, status, modified, bm25, label in rows:
            if rowid not in found:  # a row scored already keeps its (exact) score
                found[rowid] = (rowid, node_id, modified, query.score(bm25, label, status))
        best = _ordered(list(found.values()))
        if fetch < 0 or len(rows) < fetch:
            return best[:limit]
        bound = query.best_case(rows[-1][4], rows[-1][5])
        if best[limit - 1][3] > bound:
            return best[:limit]
        # Scores tied at the cut-off (4 decimals): with candidates, all of them at once (they are few).
        fetch = fetch * 4 if among is None else -1


def _pruned(index: NodeIndex, query: _Query) -> list[_Row] | None:
    """The same list as scoring every match, scoring only the nodes that can still enter it; None
    when no node can be left out.

    A node's BM25 is below ``(k1 + 1) * IDF`` summed over the query terms it holds (FTS5 sums a
    share below ``k1 + 1`` per term), and its label is known. So once some nodes are scored exactly
    and the limit-th best of them scores ``theta``, a node whose bound rounds below ``theta`` cannot
    enter the list: not even by a tie. First, the nodes holding every term that have a label, and
    the first few others holding every term, are scored in one walk over the nodes holding every
    term (``"a" AND "b"`` keeps the phrases of ``"a" OR "b"`` in the same order, so FTS5 gives each
    of those nodes the same BM25, to the bit); a one-term query takes the best labels alone as its
    threshold (BM25 is never negative). Then the walk over all matches scores only the nodes that
    can still reach ``theta``: a labelled node lacking some term (it was not among the first) whose
    label plus the bounds of all but its weakest possibly missing term can, and a node without a
    label holding a set of terms whose bounds can (an FTS5 expression: the smallest such sets)."""
    quoted, limit, bonus = query.quoted, query.limit, query.bonus
    bounds = [(BM25_K1 + 1.0) * idf for idf in query.idfs]
    most_bm25 = sum(bounds)
    seeded: list[_Row] = []
    holding_every: set[int] = set()
    all_of_them = False
    if len(quoted) == 1:
        # One term: the walk over every node holding every term is the walk over all matches, as
        # dear as the final one; the labels alone give a threshold.
        best_labelled = heapq.nlargest(4 * limit + SEED_LABELLED, bonus, key=bonus.__getitem__)
        statuses = index.statuses(best_labelled, query.node_type, query.tags)
        scores = sorted((query.score(0.0, bonus[r], s) for r, s in statuses.items()), reverse=True)
    else:
        every_term = " AND ".join(quoted)
        # Likely few nodes hold every term (as if the terms were independent): score them all here.
        all_of_them = query.total * math.prod(h / query.total for h in query.hits) <= SEED_ALL_HOLDING_EVERY
        among = None if all_of_them else (list(bonus) + index.rowids_for(every_term, limit + SEED_EXTRA), None)
        rows = index.scored_rows(every_term, COLUMN_WEIGHTS, bonus, query.node_type, query.tags, among)
        holding_every = {r[0] for r in rows}
        seeded = _top(index, query, rows)
        scores = [s[3] for s in seeded]
    if len(scores) < limit or scores[limit - 1] <= 0.0:
        return None
    theta = scores[limit - 1]
    requirement = _requirement(quoted, bounds, lambda most: query.reachable(most, theta))
    if requirement is None:
        return None
    if len(quoted) > 1 and all_of_them and requirement == "(" + " AND ".join(quoted) + ")":
        requirement = ""  # only nodes holding every term could, and those were all scored
    can: dict[tuple[float, int], bool] = {}
    labelled = []
    for rowid, label in bonus.items():
        if rowid in holding_every:
            continue  # scored exactly already
        key = (label, query.known[rowid])
        if key not in can:
            missing = [b for i, b in enumerate(bounds) if not key[1] >> i & 1]
            # Not among those holding every term (all scored above), so one of the terms its title
            # and tags lack is missing: at least the weakest of them. (One term: none is missing.)
            can[key] = query.reachable(label + most_bm25 - (min(missing) if missing else 0.0), theta)
        if can[key]:
            labelled.append(rowid)
    if not labelled and not requirement:
        return _ordered(seeded)[:limit]
    # A labelled node not in ``labelled`` but holding the requirement is scored here without its
    # label: if it was scored in the first walk, that exact score stands; if not, it could not reach
    # theta even with its label, so it is never among those returned.
    final_bonus = {r: bonus[r] for r in labelled}
    return _best(index, query, " OR ".join(quoted), final_bonus, (labelled, requirement or None), seeded)


def _top(index: NodeIndex, query: _Query, rows: list[tuple[int, float, float]]) -> list[_Row]:
    """The ``limit`` best of ``rows`` (rowid, BM25, bonus; highest BM25 + bonus first), ordered as
    returned: node details are read for the first rows only, more while a row not read yet could
    still enter (the status factor only lowers a score)."""
    limit = query.limit
    details: dict[int, tuple[str, str, str]] = {}
    read, batch = 0, limit + 10
    while True:
        details.update(index.row_details([r[0] for r in rows[read : read + batch]]))
        read += batch
        best = _ordered([
            (rowid, details[rowid][0], details[rowid][2], query.score(bm25, label, details[rowid][1]))
            for rowid, bm25, label in rows[:read] if rowid in details
        ])[:limit]
        if read >= len(rows):
            return best
        bound = query.best_case(rows[read][1], rows[read][2])
        if len(best) == limit and best[-1][3] > bound:
            return best
        batch *= 4


def _requirement(quoted: list[str], bounds: list[float], reachable) -> str | None:
    """An FTS5 expression matching every node whose query terms' bounds can together reach the
    threshold (``reachable(sum)``): the OR of the smallest such sets of terms, each an AND. "" when no
    set can; None when every single term can (no node can be left out by its terms)."""
    n = len(quoted)
    if all(reachable(b) for b in bounds):
        return None
    if not reachable(sum(bounds)):
        return ""
    if n <= REQUIREMENT_EXACT_TERMS:
        smallest: list[int] = []
        for mask in sorted(range(1, 1 << n), key=lambda m: bin(m).count("1")):
            if any(mask & s == s for s in smallest):
                continue  # holds a smaller set that already reaches
            if reachable(sum(b for i, b in enumerate(bounds) if mask >> i & 1)):
                smallest.append(mask)
        return " OR ".join(
            "(" + " AND ".join(q for i, q in enumerate(quoted) if mask >> i & 1) + ")" for mask in smallest
        )
    # Many terms: leave out only the nodes holding none but the weakest terms, whose bounds together
    # cannot reach (MaxScore's split); the others must hold one of the stronger terms.
    order = sorted(range(n), key=lambda i: bounds[i])
    weak = 0.0
    for k, i in enumerate(order):
        if reachable(weak + bounds[i]):
            return " OR ".join(quoted[j] for j in sorted(order[k:]))
        weak += bounds[i]
    return ""


def _hits(index: NodeIndex, top: list[_Row]) -> list[Hit]:
    nodes = index.nodes_by_rowid([s[0] for s in top])
    return [Hit(nodes[s[0]], s[3]) for s in top if s[0] in nodes]


def _ordered(scored: list[_Row]) -> list[_Row]:
    """Best score first; ties by most recently modified (the index's fixed-width UTC text), then id."""
    scored.sort(key=lambda s: s[1])
    scored.sort(key=lambda s: s[2], reverse=True)
    scored.sort(key=lambda s: s[3], reverse=True)
    return scored
