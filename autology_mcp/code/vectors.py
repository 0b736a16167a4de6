"""Deterministic hashed vectors (engine ``deterministic-hash-tf``, seed 003).

normalize → tokenize → add bounded bigrams → FNV-1a (32 bit) of each feature modulo the dimension
→ weight ``1 + log(tf)`` → L2-normalize → float32. No model, no network: the same text always gives
the same bytes.

This module is the plain-Python path, for one text at a time (queries): :func:`sparse_vector`,
:func:`vector_f32`. The index builder computes the same bytes for many chunks at once with numpy
(:mod:`autology_mcp.code.vectors_batch`), so searches and hooks never import numpy.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from functools import reduce
from operator import add, mul

from autology_mcp.common.text import code_tokens

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193
BUCKET_CACHE = 400_000  # features whose bucket is remembered (per dimension; it is only a cache)

_bucket_caches: dict[int, dict[str, int]] = {}


def fnv1a_32(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFF
    return h


def _buckets(dimension: int) -> dict[str, int]:
    """The bucket cache of ``dimension``. When it is full a new, empty one replaces it (never
    cleared in place: a thread between filling it and reading it keeps the one it filled)."""
    cache = _bucket_caches.get(dimension)
    if cache is None or len(cache) > BUCKET_CACHE:  # bound memory; it is only a cache
        cache = _bucket_caches[dimension] = {}
    return cache


def bucket(feature: str, dimension: int) -> int:
    cache = _buckets(dimension)
    b = cache.get(feature)
    if b is None:
        b = cache[feature] = fnv1a_32(feature.encode("utf-8")) % dimension
    return b


def features(text: str, max_bigrams: int) -> Counter[str]:
    return features_of_tokens(code_tokens(text), max_bigrams)


def features_of_tokens(tokens: list[str], max_bigrams: int) -> Counter[str]:
    counts = Counter(tokens)
    if max_bigrams:
        counts.update(map(" ".join, zip(tokens, tokens[1 : max_bigrams + 1])))
    return counts


class _Weights(dict):
    """tf -> 1 + ln(tf), filled on first use."""

    def __missing__(self, tf: int) -> float:
        w = self[tf] = 1.0 + math.log(tf) if tf > 1 else 1.0
        return w


tf_weights = _Weights()


def _accumulate(counts: Counter[str], dimension: int) -> dict[int, float]:
    """Bucket -> summed weight of its features. The weights of a bucket are added in the order of the
    features' first appearance, and the buckets keep the order they were first met in, so the floats
    are the same bits on every run."""
    acc: dict[int, float] = {}
    get = acc.get
    for feature, tf in counts.items():
        i = bucket(feature, dimension)
        acc[i] = get(i, 0.0) + tf_weights[tf]  # 0.0 + w is w exactly
    return acc


def _sum_in_order(values) -> float:
    """Left to right, one rounding per addition (``sum`` of floats compensates since Python 3.12)."""
    return reduce(add, values, 0.0)


def _normalized(counts: Counter[str], dimension: int) -> dict[int, float]:
    """The L2-normalized vector of ``counts`` as ``{dimension index: weight}`` (only non-zero entries)."""
    acc = _accumulate(counts, dimension)
    norm = math.sqrt(_sum_in_order(map(mul, acc.values(), acc.values())))
    if norm == 0:
        return {}
    return {i: v / norm for i, v in sorted(acc.items())}


def sparse_vector(text: str, dimension: int, max_bigrams: int) -> dict[int, float]:
    """The L2-normalized vector as ``{dimension index: weight}`` (only non-zero entries)."""
    return _normalized(features(text, max_bigrams), dimension)


def to_f32(sparse: dict[int, float], dimension: int) -> bytes:
    """Dense float32 row (little-endian, as ``array('f')`` on every supported platform)."""
    row = array("f", bytes(4 * dimension))
    for i, v in sparse.items():
        row[i] = v
    return row.tobytes()


def vector_f32(text: str, dimension: int, max_bigrams: int) -> bytes:
    return to_f32(sparse_vector(text, dimension, max_bigrams), dimension)


def vectors_f32_of_tokens(chunks: list[list[str]], dimension: int, max_bigrams: int) -> list[bytes]:
    """:func:`vector_f32` of texts given as their :func:`code_tokens`, one at a time in plain Python: the
    reference the builder's numpy path (:mod:`autology_mcp.code.vectors_batch`) is tested against, and
    what a build uses when numpy is missing (an editable install from before it was a dependency)."""
    return [to_f32(_normalized(features_of_tokens(tokens, max_bigrams), dimension), dimension) for tokens in chunks]


def cosine_sparse_dense(query: dict[int, float], row: bytes) -> float:
    """Cosine of a sparse query vector with a stored float32 row (both L2-normalized)."""
    if not query:
        return 0.0
    dense = array("f")
    dense.frombytes(row)
    return sum(w * dense[i] for i, w in query.items())
