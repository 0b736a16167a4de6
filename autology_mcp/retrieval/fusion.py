"""Rank fusion and diversification, as plain functions over hashable keys.

- :func:`rrf`: Reciprocal Rank Fusion, ``RRF(d) = Σ_c w_c / (k + rank_c(d))`` (ranks from 1);
- :func:`mmr`: Maximal Marginal Relevance, greedily picking ``argmax λ·rel(d) − (1−λ)·max_s sim(d, s)``
  over the already selected ``s``;
- :func:`tree_similarity`: how alike two hits' locations are (same file, same folder, same tree).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def rrf(rankings: Mapping[str, Sequence[K]], weights: Mapping[str, float], k: int = 60) -> dict[K, float]:
    """Fused score of every key ranked by any channel. A key listed twice by one channel counts once,
    at its best rank. Channels missing from ``weights`` weigh 1."""
    scores: dict[K, float] = {}
    for channel, ranking in rankings.items():
        w = weights.get(channel, 1.0)
        if w <= 0:
            continue
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    return scores


def rrf_ideal(channels: Sequence[str], weights: Mapping[str, float], k: int = 60) -> float:
    """The RRF score of a key ranked first by every one of ``channels``: the scale of :func:`rrf`."""
    return sum(max(weights.get(c, 1.0), 0.0) / (k + 1) for c in channels)


def mmr(
    keys: Sequence[K],
    relevance: Mapping[K, float],
    similarity: Callable[[K, K], float],
    lam: float = 0.7,
    limit: int | None = None,
) -> list[K]:
    """Reorder ``keys`` by MMR. Ties keep the input order, so a sorted input gives a deterministic output."""
    remaining = list(dict.fromkeys(keys))
    limit = len(remaining) if limit is None else min(limit, len(remaining))
    chosen: list[K] = []
    closest = {key: 0.0 for key in remaining}  # max similarity to anything chosen so far
    while remaining and len(chosen) < limit:
        best_i, best_v = 0, None
        for i, key in enumerate(remaining):
            value = lam * relevance[key] - (1.0 - lam) * closest[key]
            if best_v is None or value > best_v + 1e-12:
                best_i, best_v = i, value
        pick = remaining.pop(best_i)
        chosen.append(pick)
        for key in remaining:
            s = similarity(key, pick)
            if s > closest[key]:
                closest[key] = s
    return chosen


def tree_similarity(a: str, b: str) -> float:
    """1 for the same location, else the share of leading path components in common
    (``src/auth/token.py`` vs ``src/auth/session.py``: 2 of 3)."""
    if a == b:
        return 1.0
    pa, pb = a.split("/"), b.split("/")
    common = 0
    for x, y in zip(pa, pb):
        if x != y:
            break
        common += 1
    return common / max(len(pa), len(pb))


SAME_FOLDER = 0.15
SAME_TREE = 0.05
SAME_KIND = 0.1


def location_similarity(a: str, b: str, same_kind: bool) -> float:
    """MMR's similarity of two hits: 1 for the same file (or node); otherwise up to 0.15 for the same
    folder (scaled by the shared share of the folder path, so 0.05 for the same top-level tree
    only), plus 0.1 when they are the same kind of source."""
    if a == b:
        return 1.0
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    shared = 0
    for x, y in zip(da, db):
        if x != y:
            break
        shared += 1
    folder = 0.0
    if shared and da == db:
        folder = SAME_FOLDER
    elif shared:
        folder = max(SAME_TREE, SAME_FOLDER * shared / max(len(da), len(db)))
    return folder + (SAME_KIND if same_kind else 0.0)
