"""Hybrid ranking over the index.

Candidates are the best ``candidates`` chunks by BM25 (FTS5, porter stemming, OR of the query
words; columns text / symbol / path weighted 1 / 3 / 2; when the words match more than
``lexical_budget`` chunks, words found in more than ``common_word_ratio`` of all chunks are left
out of this pass). Each candidate is then scored:

    score = (w.bm25·bm25 + w.symbol·symbol + w.path·path + w.vector·vector + w.exact·exact
             + w.recency·recency) × area

- bm25    the FTS5 score divided by the best candidate's (0..1);
- symbol  set cosine between the query words and the words of the chunk's symbol name;
- path    how well the query words match the file path's words (trigram similarity, so partial
          and misspelled names count);
- vector  cosine of the deterministic hashed vectors (a chunk sharing no feature with the query
          has cosine 0, so scoring the lexical candidates loses nothing);
- exact   the share of the query's identifiers (``pytest_addopts``, ``iterBytes``, `` `binascii` ``:
          :func:`autology_mcp.common.text.code_identifiers`) found whole, unstemmed, in the chunk's
          text, symbol or path; 0 when the query has none. BM25's stemming makes ``addopts`` and
          ``addoption`` one word; this makes the chunk holding ``PYTEST_ADDOPTS`` outrank the ten
          ``pytest_addoption`` hooks. The chunks holding an identifier whole are candidates even
          outside BM25's best (found by an FTS5 phrase of the identifier's words, then checked);
- recency the file's mtime scaled over the candidates (weight 0 by default: mtimes are not
          reproducible across clones);
- area    the path prior from ``area_weights`` (the lowest matching glob wins; 1 otherwise).

Ties break on path then line, so the same index and query always give the same ranking.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

from autology_mcp.code.config import IndexConfig
from autology_mcp.code.scan import glob_match
from autology_mcp.code.store import IndexDB
from autology_mcp.code.vectors import cosine_sparse_dense, sparse_vector
from autology_mcp.common.errors import ValidationError
from autology_mcp.common.text import code_identifiers, code_query_words, identifier_pattern, identifier_phrase, name_words

BM25_COLUMN_WEIGHTS = (1.0, 3.0, 2.0)  # body, symbol, path
SNIPPET_LINES = 6


@dataclass
class _Cand:
    id: int
    bm25: float
    path: str = ""
    start: int = 0
    end: int = 0
    chunk_type: str = ""
    symbol: str | None = None
    kind: str | None = None
    text: str = ""
    vector: bytes = b""


@lru_cache(maxsize=65536)
def trigrams(word: str) -> frozenset[str]:
    padded = f"  {word} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def _word_sim(a: str, b: str) -> float:
    if a == b:
        return 1.0
    if len(a) >= 4 and len(b) >= 4 and (a in b or b in a):
        return 0.8
    ta, tb = trigrams(a), trigrams(b)
    return len(ta & tb) / len(ta | tb)


def path_score(qwords: list[str], path: str, memo: dict | None = None) -> float:
    """Mean over query words of the best trigram similarity to a word of the path (below 0.4 counts 0)."""
    pw = name_words(path)
    if not qwords or not pw:
        return 0.0
    memo = {} if memo is None else memo  # (query word, path word) -> similarity, shared within a query
    total = 0.0
    for q in qwords:
        best = 0.0
        for p in pw:
            sim = memo.get((q, p))
            if sim is None:
                sim = memo[(q, p)] = _word_sim(q, p)
            if sim > best:
                best = sim
        total += best if best >= 0.4 else 0.0
    return total / len(qwords)


def symbol_score(qwords: set[str], symbol: str | None) -> float:
    if not symbol:
        return 0.0
    sw = name_words(symbol)
    if not sw:
        return 0.0
    common = len(qwords & sw)
    return common / (len(qwords) * len(sw)) ** 0.5 if common else 0.0


# Words that ask for an area the default weights rank low, and how to recognise that area's patterns.
ASKED_AREAS = (
    (frozenset({"test", "tests", "testing", "pytest", "unittest", "fixture", "fixtures", "spec", "specs"}),
     lambda p: "test" in p or "spec" in p),
    (frozenset({"bench", "benches", "benchmark", "benchmarks"}), lambda p: "bench" in p),
    (frozenset({"doc", "docs", "documentation", "readme", "example", "examples", "tutorial"}),
     lambda p: p.startswith(("docs/", "doc/", "docs_src/", "examples/"))),
    (frozenset({"changelog", "changes", "history", "news"}), lambda p: any(n in p for n in ("CHANGES", "CHANGELOG", "HISTORY"))),
)


def area_weights_for(area_weights: dict[str, float], qwords: list[str]) -> dict[str, float]:
    """The area weights for one query: tests, docs and changelogs rank below source unless the query
    asks for them (a word like "test", "docs" or "changelog"); then their weights go halfway to 1."""
    words = set(qwords)
    asked = [is_area for triggers, is_area in ASKED_AREAS if words & triggers]
    if not asked:
        return area_weights
    return {p: (1.0 + w) / 2 if any(is_area(p) for is_area in asked) else w for p, w in area_weights.items()}


def area_weight(path: str, area_weights: dict[str, float]) -> float:
    return _area_weight(path, tuple(sorted(area_weights.items())))


@lru_cache(maxsize=65536)
def _area_weight(path: str, area_weights: tuple[tuple[str, float], ...]) -> float:
    matches = [w for pattern, w in area_weights if glob_match(path, pattern)]
    return min(matches) if matches else 1.0


def snippet(text: str, qwords: list[str], max_lines: int = SNIPPET_LINES) -> tuple[int, str]:
    """(offset of the first snippet line within the chunk, the snippet): the window with most query words."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return 0, "\n".join(line[:200] for line in lines)
    stems = [q[:5] for q in qwords]
    hits = [sum(1 for s in stems if s in line.lower()) for line in lines]
    best, best_at = -1, 0
    for i in range(0, len(lines) - max_lines + 1):
        n = sum(hits[i : i + max_lines])
        if n > best:
            best, best_at = n, i
    return best_at, "\n".join(line[:200] for line in lines[best_at : best_at + max_lines])


def fts_expression(qwords: list[str]) -> str:
    return " OR ".join(f'"{w}"' for w in qwords)


def lexical_words(conn, qwords: list[str], ratio: float, budget: int) -> list[str]:
    """The query words for the BM25 channel. A speed guard for large indexes: when the words match
    more than ``budget`` chunks, the words found in more than ``ratio`` of all chunks are left out
    (they barely move BM25 but make it score most of the index), unless that leaves none."""
    if ratio >= 1.0 or len(qwords) < 2:
        return qwords
    count = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
    if conn.execute(count, (fts_expression(qwords),)).fetchone()[0] <= budget:
        return qwords
    total = conn.execute("SELECT coalesce(sum(chunk_count), 0) FROM files").fetchone()[0]
    keep = [w for w in qwords if conn.execute(count, (f'"{w}"',)).fetchone()[0] <= ratio * total]
    return keep or qwords


def bm25_candidates(conn, expression: str, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best (rowid, bm25) rows. Rows tied on score at the cut are chosen by path and
    line, not by rowid (which depends on the build history), so the same index content always
    gives the same candidates."""
    bw = ", ".join(str(w) for w in BM25_COLUMN_WEIGHTS)
    scored = f"SELECT rowid, bm25(chunks_fts, {bw}) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
    extra = 64  # room for the usual tie groups, found in the same pass
    rows = conn.execute(f"{scored} ORDER BY s, rowid LIMIT ?", (expression, limit + extra)).fetchall()
    if len(rows) <= limit or rows[limit][1] != rows[limit - 1][1]:
        return rows[:limit]
    boundary = rows[limit - 1][1]
    above = [r for r in rows if r[1] < boundary]
    tied = [r for r in rows if r[1] == boundary]
    if rows[-1][1] == boundary and len(rows) == limit + extra:  # the tie group may go on: take all of it
        tied = conn.execute(f"SELECT rowid, s FROM ({scored}) WHERE s = ?", (expression, boundary)).fetchall()
    marks = ",".join("?" * len(tied))
    where = {rid: (path, start) for rid, path, start in conn.execute(
        f"SELECT id, path, start_line FROM chunks WHERE id IN ({marks})", [r[0] for r in tied])}
    tied.sort(key=lambda r: where.get(r[0], ("", 0)))
    return above + tied[: limit - len(above)]


IDENTIFIER_CANDIDATES = 1000  # chunks the identifier phrases may add (best by their own BM25)


def identifier_candidates(conn, identifiers: list[str], expression: str, known: dict) -> list[tuple[int, float]]:
    """(rowid, bm25 under ``expression``) of chunks outside ``known`` that may hold an identifier whole:
    an FTS5 phrase of its words matches them (and its stem-alikes, which the exact check drops)."""
    phrases = [identifier_phrase(i) for i in identifiers]
    phrase_expr = " OR ".join('"' + " ".join(words) + '"' for words in phrases if words)
    if not phrase_expr:
        return []
    rows = conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?",
                        (phrase_expr, IDENTIFIER_CANDIDATES)).fetchall()
    new = [r[0] for r in rows if r[0] not in known]
    if not new:
        return []
    bw = ", ".join(str(w) for w in BM25_COLUMN_WEIGHTS)
    marks = ",".join("?" * len(new))
    scored = dict(conn.execute(f"SELECT rowid, bm25(chunks_fts, {bw}) FROM chunks_fts WHERE chunks_fts MATCH ?"
                               f" AND rowid IN ({marks})", [expression, *new]))
    return [(rid, scored.get(rid, 0.0)) for rid in new]


def _fill(conn, cands: dict[int, _Cand], with_text: bool) -> None:
    """Load each candidate's location, symbol and vector (and text, when asked) from the index."""
    if not cands:
        return
    marks = ",".join("?" * len(cands))
    text_col = "c.text" if with_text else "''"
    for rid, path, s, e, ctype, sym, kind, vec, text in conn.execute(
        "SELECT c.id, c.path, c.start_line, c.end_line, c.chunk_type, c.symbol_name, c.symbol_kind,"
        f" v.vector, {text_col} FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.id IN ({marks})",
        list(cands),
    ):
        c = cands[rid]
        c.path, c.start, c.end, c.chunk_type, c.symbol, c.kind, c.vector, c.text = path, s, e, ctype, sym, kind, vec, text


def _exact_shares(cands, exact_re, identifiers: list[str], out: dict[int, float]) -> set[str]:
    """Each candidate's share of the identifiers found whole in its symbol, path or text, into ``out``;
    returns the identifiers found in any of them."""
    found_any: set[str] = set()
    for c in cands:
        if c.path:
            found = held_whole(f"{c.symbol or ''}\n{c.path}\n{c.text}", exact_re, identifiers)
            out[c.id] = len(found) / len(identifiers)
            found_any |= found
    return found_any


def held_whole(text: str, exact_re, identifiers: list[str]) -> set[str]:
    """What ``exact_re`` (the pattern of the lowercase ``identifiers``) finds whole in ``text``, lowercased;
    the pattern runs only on a text that holds one of them at all. For ASCII names in an ASCII text that
    check is exact (ignoring case, an ASCII letter matches only its two cases there); otherwise, since a
    case-blind pattern takes some non-ASCII letters for ASCII ones, the pattern always runs."""
    if text.isascii() and all(i.isascii() for i in identifiers):
        lowered = text.lower()
        if not any(i in lowered for i in identifiers):
            return set()
    return {m.lower() for m in exact_re.findall(text)}


def score_candidates(db: IndexDB, cfg: IndexConfig, qwords: list[str], query: str) -> tuple[list, dict]:
    """Every BM25 candidate scored, best first, as ``(score, candidate, parts)``, and the pass's facts
    (``lexical_words``, ``fts_s`` seconds). Read-only; :func:`search` cuts and decorates this list."""
    t0 = time.perf_counter()
    weights = cfg.weights
    conn = db.conn
    lexical = lexical_words(conn, qwords, cfg.common_word_ratio, cfg.lexical_budget)
    rows = bm25_candidates(conn, fts_expression(lexical), cfg.candidates)
    t_fts = time.perf_counter()
    identifiers = code_identifiers(query)
    exact_re = identifier_pattern(identifiers)
    cands = {rid: _Cand(rid, -score) for rid, score in rows}
    _fill(conn, cands, with_text=bool(identifiers))
    exact: dict[int, float] = {}
    if exact_re is not None:
        found = _exact_shares(cands.values(), exact_re, identifiers, exact)
        missing = [i for i in identifiers if i not in found]
        if missing:  # an identifier no BM25 candidate holds whole: look for the chunks that do
            added = {rid: _Cand(rid, -score)
                     for rid, score in identifier_candidates(conn, missing, fts_expression(lexical), cands)}
            _fill(conn, added, with_text=True)
            _exact_shares(added.values(), exact_re, identifiers, exact)
            # an added chunk stays only if it holds an identifier whole (the phrase also matched its stem-alikes)
            cands.update((rid, c) for rid, c in added.items() if exact.get(rid))
    live = [c for c in cands.values() if c.path]
    mtimes: dict[str, int] = {}
    if live and weights.get("recency"):
        paths = sorted({c.path for c in live})
        marks = ",".join("?" * len(paths))
        mtimes = dict(conn.execute(f"SELECT path, mtime_ns FROM files WHERE path IN ({marks})", paths))
    lo, hi = (min(mtimes.values()), max(mtimes.values())) if mtimes else (0, 0)
    best_bm25 = max((c.bm25 for c in live), default=0.0) or 1.0
    qset = set(qwords)
    qvec = sparse_vector(query, cfg.dimension, cfg.max_bigrams)
    path_cache: dict[str, tuple[float, float]] = {}
    sim_memo: dict[tuple[str, str], float] = {}
    area_weights = area_weights_for(cfg.area_weights, qwords)
    scored = []
    for c in live:
        if c.path not in path_cache:
            path_cache[c.path] = (path_score(qwords, c.path, sim_memo), area_weight(c.path, area_weights))
        pscore, prior = path_cache[c.path]
        vscore = max(0.0, cosine_sparse_dense(qvec, c.vector)) if len(c.vector) == 4 * cfg.dimension else 0.0
        parts = {
            "bm25": c.bm25 / best_bm25,
            "symbol": symbol_score(qset, c.symbol),
            "path": pscore,
            "vector": vscore,
            "exact": exact.get(c.id, 0.0),
            "recency": ((mtimes.get(c.path, lo) - lo) / (hi - lo)) if hi > lo else 0.0,
        }
        raw = sum(weights.get(k, 0.0) * v for k, v in parts.items())
        parts["area"] = prior
        scored.append((raw * prior, c, parts))
    scored.sort(key=lambda t: (-t[0], t[1].path, t[1].start, t[1].id))
    return scored, {"lexical_words": lexical, "fts_s": t_fts - t0}


def search(db: IndexDB, cfg: IndexConfig, query: str, top: int = 10) -> dict:
    """Rank the index's chunks for ``query``; returns ``{"hits": [...], "trace": {...}}``."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query", "must be a non-empty string")
    if top < 1 or top > 200:
        raise ValidationError("top", f"must be between 1 and 200, got {top}")
    t0 = time.perf_counter()
    qwords = code_query_words(query)
    if not qwords:
        raise ValidationError("query", "has no searchable words (only stop words, numbers or punctuation)")
    weights = cfg.weights
    conn = db.conn
    scored, facts = score_candidates(db, cfg, qwords, query)
    lexical = facts["lexical_words"]
    live = scored
    texts: dict[int, str] = {}
    chosen = []
    per_file: dict[str, int] = {}
    for score, c, parts in scored:
        if per_file.get(c.path, 0) >= cfg.max_hits_per_file:
            continue
        per_file[c.path] = per_file.get(c.path, 0) + 1
        chosen.append((score, c, parts))
        if len(chosen) >= top:
            break
    if chosen:
        marks = ",".join("?" * len(chosen))
        texts = dict(conn.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", [c.id for _, c, _ in chosen]))
    hits = []
    for score, c, parts in chosen:
        offset, snip = snippet(texts.get(c.id, ""), qwords)
        hits.append({
            "path": c.path,
            "start_line": c.start,
            "end_line": c.end,
            "location": f"{c.path}:{c.start}-{c.end}",
            "symbol": c.symbol,
            "symbol_kind": c.kind,
            "chunk_type": c.chunk_type,
            "snippet_start_line": c.start + offset,
            "snippet": snip,
            "score": round(score, 4),
            "scores": {k: round(v, 4) for k, v in parts.items()},
        })
    t_end = time.perf_counter()
    return {
        "query": query,
        "hits": hits,
        "trace": {
            "words": qwords,
            "lexical_words": lexical,
            "candidates": len(live),
            "weights": dict(weights),
            "fts_ms": round(facts["fts_s"] * 1000, 2),
            "total_ms": round((t_end - t0) * 1000, 2),
        },
    }
