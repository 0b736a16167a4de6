"""Deterministic hashed vectors (engine ``deterministic-hash-tf``, seed 003).

normalize → tokenize → add bounded bigrams → FNV-1a (32 bit) of each feature modulo the dimension
→ weight ``1 + log(tf)`` → L2-normalize → float32. No model, no network: the same text always gives
the same bytes.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter

from autology_mcp.common.text import code_tokens

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193

_bucket_caches: dict[int, dict[str, int]] = {}


def fnv1a_32(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFF
    return h


def _buckets(dimension: int) -> dict[str, int]:
    cache = _bucket_caches.setdefault(dimension, {})
    if len(cache) > 400_000:  # bound memory; it is only a cache
        cache.clear()
    return cache


def bucket(feature: str, dimension: int) -> int:
    cache = _buckets(dimension)
    b = cache.get(feature)
    if b is None:
        b = cache[feature] = fnv1a_32(feature.encode("utf-8")) % dimension
    return b


def features(text: str, max_bigrams: int) -> Counter[str]:
    tokens = code_tokens(text)
    counts = Counter(tokens)
    if max_bigrams:
        counts.update(map(" ".join, zip(tokens, tokens[1 : max_bigrams + 1])))
    return counts


def sparse_vector(text: str, dimension: int, max_bigrams: int) -> dict[int, float]:
    """The L2-normalized vector as ``{dimension index: weight}`` (only non-zero entries)."""
    acc: dict[int, float] = {}
    cache = _buckets(dimension)
    get = cache.get
    log = math.log
    for feat, tf in features(text, max_bigrams).items():
        i = get(feat)
        if i is None:
            i = cache[feat] = fnv1a_32(feat.encode("utf-8")) % dimension
        w = 1.0 + log(tf) if tf > 1 else 1.0
        if i in acc:
            acc[i] += w
        else:
            acc[i] = w
    norm = math.sqrt(sum(v * v for v in acc.values()))
    if norm == 0:
        return {}
    return {i: v / norm for i, v in sorted(acc.items())}


def to_f32(sparse: dict[int, float], dimension: int) -> bytes:
    """Dense float32 row (little-endian, as ``array('f')`` on every supported platform)."""
    row = array("f", bytes(4 * dimension))
    for i, v in sparse.items():
        row[i] = v
    return row.tobytes()


def vector_f32(text: str, dimension: int, max_bigrams: int) -> bytes:
    return to_f32(sparse_vector(text, dimension, max_bigrams), dimension)


def cosine_sparse_dense(query: dict[int, float], row: bytes) -> float:
    """Cosine of a sparse query vector with a stored float32 row (both L2-normalized)."""
    if not query:
        return 0.0
    dense = array("f")
    dense.frombytes(row)
    return sum(w * dense[i] for i, w in query.items())
