"""The final score of a candidate (HoloIndex's blend) and its three components, each in 0..1:

    score      = 0.5·priority + 0.3·similarity + 0.2·keyword
    similarity = r · min(1, RRF(d) / RRF_ideal(d))^4 + (1 − r) · min(1, cos(q, d) / COS_FULL)
                 (r = rank_share: 0.65 for nodes and sessions, 0.5 for code and doc chunks)
                 (for a code or doc chunk the repository index scored, index(d) / index(best) instead of cos)
    keyword    = share of the query's terms found in d's text
    priority   = source prior × area prior × intent boost   (capped at 1)

- ``RRF(d)`` is the fused score (:func:`autology_mcp.retrieval.fusion.rrf`) plus graph-expansion
  credits; ``RRF_ideal(d)`` is what a candidate ranked first by the core channels of its source
  would get (nodes: node_bm25 + node_title_tags; code and docs: code_bm25 + vectors; sessions:
  sessions), so rank evidence is absolute, not relative to this query's best hit; the 4th power
  (``RANK_SHARPNESS``) spreads RRF's flat k = 60 curve so rank order counts against keyword share;
- ``index(d)`` is the repository index's own score of the chunk (its blend of BM25, symbol, path
  and vector evidence, the vector cosine included: :func:`autology_mcp.code.query.score_candidates`),
  relative to the best chunk it scored for this query. It ranked source files better than the cosine
  beside RRF did (three repositories' commit histories, bench/unified_code_eval.py, issue 15);
  the RRF part keeps a flood of equally good chunks from all scoring 1;
- ``cos`` is the hashed-vector cosine (the repository index's engine) between the query and the
  candidate (a chunk's stored vector; for nodes and sessions, the vector of the first 800
  characters of title, tags and text, cached); ``COS_FULL`` = 0.3 is where a short query's cosine
  with a passage saturates;
- the source prior of a node is ``type prior × status prior × (0.8 + 0.2·confidence)``; of a code,
  doc or session hit its kind prior times, for files, the index's own path prior (``area_weights``);
- the area prior is the lowest matching ``[retrieval] area_priors`` entry (``tag:<tag>`` for nodes,
  path globs for files and node files), 1 when none matches.

The weights are configurable (``blend_*``), and must add up to 1.
"""

from __future__ import annotations

import math
from collections import OrderedDict

from autology_mcp.code.scan import glob_match
from autology_mcp.code.vectors import sparse_vector
from autology_mcp.common.text import keyword_coverage
from autology_mcp.retrieval.candidates import Candidate
from autology_mcp.retrieval.config import RetrievalConfig
from autology_mcp.retrieval.fusion import rrf_ideal
from autology_mcp.retrieval.intent import Intent

COS_FULL = 0.3
VECTOR_TEXT_MAX = 800  # characters of a node's or session's text its vector is computed from
VECTOR_DIMENSION = 384  # the repository index's default engine settings (deterministic-hash-tf)
VECTOR_BIGRAMS = 256
CORE_CHANNELS = {
    "node": ("node_bm25", "node_title_tags"),
    "code": ("code_bm25", "vectors"),
    "doc": ("code_bm25", "vectors"),
    "session_chunk": ("sessions",),
    "handoff": ("sessions",),
    "commit": ("history",),
}

_vectors: OrderedDict[str, dict[int, float]] = OrderedDict()


def _text_vector(key: str, text: str) -> dict[int, float]:
    v = _vectors.get(key)
    if v is None:
        v = _vectors[key] = sparse_vector(text, VECTOR_DIMENSION, VECTOR_BIGRAMS)
        if len(_vectors) > 20_000:
            _vectors.popitem(last=False)
    else:
        _vectors.move_to_end(key)
    return v


def cosine(query_vec: dict[int, float], cand: Candidate) -> float:
    if cand.cosine is not None:
        return cand.cosine
    if cand.node is not None:
        key = f"{cand.key}@{cand.node.modified.isoformat()}"
    else:
        key = f"{cand.key}@{hash(cand.text)}"
    vec = _text_vector(key, cand.text[:VECTOR_TEXT_MAX])
    cand.cosine = max(0.0, sum(w * vec.get(i, 0.0) for i, w in query_vec.items()))
    return cand.cosine


def query_vector(query: str) -> dict[int, float]:
    return sparse_vector(query, VECTOR_DIMENSION, VECTOR_BIGRAMS)


def area_prior(cand: Candidate, cfg: RetrievalConfig) -> float:
    if not cfg.area_priors:
        return 1.0
    matches = []
    for pattern, w in cfg.area_priors.items():
        if pattern.startswith("tag:"):
            if cand.node is not None and pattern[4:] in cand.node.tags:
                matches.append(w)
        elif cand.path and glob_match(cand.path, pattern):
            matches.append(w)
    return min(matches) if matches else 1.0


def priority(cand: Candidate, cfg: RetrievalConfig, intent: Intent) -> float:
    if cand.node is not None:
        n = cand.node
        base = (
            cfg.type_priors.get(n.type.value, 0.8)
            * cfg.status_priors.get(n.status.value, 1.0)
            * (0.8 + 0.2 * n.confidence)
        )
    else:
        base = cfg.kind_priors.get(cand.kind, 0.8) * cand.area_prior
    return min(1.0, base * area_prior(cand, cfg) * intent.kind_boost(cand.kind))


RANK_SHARPNESS = 4.0


def similarity(rrf_score: float, cos: float, kind: str, weights: dict[str, float], k: int,
               rank_share: float = 0.65, index_relative: float | None = None) -> float:
    ideal = rrf_ideal(CORE_CHANNELS.get(kind, ("code_bm25",)), weights, k) or 1.0
    rank = min(1.0, rrf_score / ideal) ** RANK_SHARPNESS
    if index_relative is not None:  # a code or doc chunk the repository index scored: its blend, not cos
        return rank_share * rank + (1.0 - rank_share) * min(1.0, max(0.0, index_relative))
    return rank_share * rank + (1.0 - rank_share) * min(1.0, cos / COS_FULL)


def blend(pri: float, sim: float, kw: float, cfg: RetrievalConfig) -> float:
    return cfg.blend_priority * pri + cfg.blend_similarity * sim + cfg.blend_keyword * kw


def keyword(term_stems: list[str], cand: Candidate) -> tuple[float, list[str]]:
    return keyword_coverage(term_stems, cand.text)


def term_weights(term_stems: list[str], matched_sets, idf: bool = True) -> dict[str, float]:
    """Weight of each query term: ``ln(1 + n / (1 + df))`` where df is the number of the n
    shortlisted candidates containing it. A term every candidate has (the project's name, "test")
    weighs little; a term only a few have decides."""
    if not idf:
        return {t: 1.0 for t in term_stems}
    sets = [set(m) for m in matched_sets]
    n = len(sets)
    return {t: math.log(1 + n / (1 + sum(1 for m in sets if t in m))) for t in term_stems}


def rank_share(cand: Candidate, cfg: RetrievalConfig) -> float:
    family = ("nodes" if cand.node is not None else "sessions" if cand.kind in ("session_chunk", "handoff")
              else "history" if cand.kind == "commit" else "files")
    return min(1.0, cfg.rank_share.get(family, 0.5))


def weighted_share(matched: list[str], weights: dict[str, float]) -> float:
    total = sum(weights.values())
    return sum(weights[t] for t in matched) / total if total else 0.0
