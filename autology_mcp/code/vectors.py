"""Deterministic hashed vectors (engine ``deterministic-hash-tf``, seed 003).

normalize → tokenize → add bounded bigrams → FNV-1a (32 bit) of each feature modulo the dimension
→ weight ``1 + log(tf)`` → L2-normalize → float32. No model, no network: the same text always gives
the same bytes.

Two ways in, the same bytes out: :func:`sparse_vector` / :func:`vector_f32` for one text (queries),
and :func:`vectors_f32_of_tokens` for many chunks at once (the index builder: the features no
chunk has met before are hashed together, :func:`fnv1a_32_many`).
"""

from __future__ import annotations

import math
import sys
from array import array
from bisect import bisect_right
from collections import Counter
from itertools import chain, filterfalse
from operator import mul

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


_LANE_MASK = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # a 32-bit value in a 64-bit lane, little-endian
LANES_FROM = 32  # fewer byte strings than this are hashed one by one


def fnv1a_32_many(datas: list[bytes]) -> dict[bytes, int]:
    """``{data: fnv1a_32(data)}`` for many distinct byte strings at once (twice as fast as one by one).

    Each string gets a 64-bit lane of one Python integer, and a step of FNV-1a (XOR a byte, multiply
    by the prime, keep 32 bits) runs on every lane at once, in C: a lane's value stays below 2**32
    and the prime below 2**25, so a product never spills into the next lane. The strings are taken
    shortest first, so the lanes that have taken all their bytes are always the lowest ones, and
    they are moved out before the next step."""
    if len(datas) < LANES_FROM:
        return {d: fnv1a_32(d) for d in datas}
    datas = sorted(datas, key=len)
    lens = list(map(len, datas))
    n, width = len(datas), lens[-1]
    blob = b"".join([d.ljust(width, b"\0") for d in datas])  # byte p of string j is at j * width + p
    out = array("Q")
    h = int.from_bytes(FNV_OFFSET.to_bytes(8, "little") * n, "little")
    start = 0  # the lanes below start are finished and moved out of h
    for p in range(width + 1):
        done = bisect_right(lens, p)
        if done > start:
            k = done - start
            out.frombytes((h & ((1 << 64 * k) - 1)).to_bytes(8 * k, "little"))
            h >>= 64 * k
            start = done
        if p == width:
            break
        active = n - start
        column = bytearray(8 * active)
        column[::8] = blob[start * width + p :: width]
        h = ((h ^ int.from_bytes(column, "little")) * FNV_PRIME) & int.from_bytes(_LANE_MASK * active, "little")
    if sys.byteorder == "big":  # array("Q") holds native-order values; the lanes were written little-endian
        out.byteswap()
    return dict(zip(datas, out))


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


_weights = _Weights()


def _with_buckets(chunks: list[Counter[str]], dimension: int) -> dict[str, int]:
    """The bucket cache, now holding every feature of ``chunks`` (the new ones hashed together)."""
    cache = _buckets(dimension)
    new = dict.fromkeys(chain.from_iterable(filterfalse(cache.__contains__, c) for c in chunks))
    if len(cache) + len(new) > BUCKET_CACHE:
        cache = _bucket_caches[dimension] = {}
        new = dict.fromkeys(chain.from_iterable(chunks))
    encoded = list(map(str.encode, new))
    hashes = fnv1a_32_many(encoded)
    cache.update(zip(new, (hashes[e] % dimension for e in encoded)))
    return cache


def _accumulate(counts: Counter[str], buckets: dict[str, int]) -> dict[int, float]:
    """Bucket -> summed weight of its features. The weights of a bucket are added in the order of the
    features' first appearance, and the buckets keep the order they were first met in, so the floats
    are the same bits on every run."""
    acc: dict[int, float] = {}
    get = acc.get
    for i, w in zip(map(buckets.__getitem__, counts), map(_weights.__getitem__, counts.values())):
        acc[i] = get(i, 0.0) + w  # 0.0 + w is w exactly
    return acc


def sparse_vector(text: str, dimension: int, max_bigrams: int) -> dict[int, float]:
    """The L2-normalized vector as ``{dimension index: weight}`` (only non-zero entries)."""
    counts = features(text, max_bigrams)
    acc = _accumulate(counts, _with_buckets([counts], dimension))
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


def vectors_f32_of_tokens(chunks: list[list[str]], dimension: int, max_bigrams: int) -> list[bytes]:
    """``vector_f32`` of many texts, given as their :func:`code_tokens` (the index builder's path):
    the same bytes, computed together."""
    counts = [features_of_tokens(tokens, max_bigrams) for tokens in chunks]
    buckets = _with_buckets(counts, dimension)
    out = []
    for c in counts:
        acc = _accumulate(c, buckets)
        row = array("f", bytes(4 * dimension))
        values = acc.values()
        norm = math.sqrt(sum(map(mul, values, values)))  # the additions of sparse_vector's norm, in its order
        if norm:
            for i, v in acc.items():
                row[i] = v / norm
        out.append(row.tobytes())
    return out


def cosine_sparse_dense(query: dict[int, float], row: bytes) -> float:
    """Cosine of a sparse query vector with a stored float32 row (both L2-normalized)."""
    if not query:
        return 0.0
    dense = array("f")
    dense.frombytes(row)
    return sum(w * dense[i] for i, w in query.items())
