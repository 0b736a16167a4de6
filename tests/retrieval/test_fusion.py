"""RRF and MMR on hand-made rankings, and the location similarity used for diversity."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autology_mcp.retrieval.fusion import location_similarity, mmr, rrf, rrf_ideal, tree_similarity


def test_rrf_sums_weighted_reciprocal_ranks():
    scores = rrf({"a": ["x", "y", "z"], "b": ["y", "x"]}, {"a": 1.0, "b": 0.5}, k=60)
    assert scores["x"] == pytest.approx(1 / 61 + 0.5 / 62)
    assert scores["y"] == pytest.approx(1 / 62 + 0.5 / 61)
    assert scores["z"] == pytest.approx(1 / 63)
    assert scores["x"] > scores["y"] > scores["z"]


def test_rrf_counts_a_key_once_per_channel_at_its_best_rank_and_skips_zero_weights():
    scores = rrf({"a": ["x", "y", "x"], "off": ["z"]}, {"a": 1.0, "off": 0.0}, k=10)
    assert scores == {"x": pytest.approx(1 / 11), "y": pytest.approx(1 / 12)}


def test_rrf_channel_without_weight_weighs_one():
    assert rrf({"c": ["x"]}, {}, k=60) == {"x": pytest.approx(1 / 61)}


def test_rrf_ideal_is_the_score_of_a_key_first_everywhere():
    weights = {"a": 1.0, "b": 0.6}
    ideal = rrf_ideal(["a", "b"], weights, 60)
    assert ideal == pytest.approx(rrf({"a": ["x"], "b": ["x"]}, weights, 60)["x"])


def test_mmr_with_lambda_one_keeps_relevance_order():
    keys = ["a", "b", "c"]
    rel = {"a": 0.9, "b": 0.8, "c": 0.1}
    assert mmr(keys, rel, lambda x, y: 1.0, lam=1.0) == ["a", "b", "c"]


def test_mmr_prefers_a_diverse_item_over_a_near_duplicate():
    # a and a2 are in the same file; b is elsewhere and a little less relevant.
    rel = {"a": 0.90, "a2": 0.88, "b": 0.80}
    same = {frozenset(("a", "a2")): 1.0}
    sim = lambda x, y: same.get(frozenset((x, y)), 0.0)  # noqa: E731
    assert mmr(["a", "a2", "b"], rel, sim, lam=0.7) == ["a", "b", "a2"]
    # by hand: after a, a2 = 0.7*0.88 - 0.3*1 = 0.316 < b = 0.7*0.80 = 0.56


def test_mmr_respects_the_limit_and_input_order_on_ties():
    rel = {k: 0.5 for k in "abcd"}
    assert mmr(list("dcba"), rel, lambda x, y: 0.0, lam=0.7, limit=2) == ["d", "c"]


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(0, 1)), min_size=1, max_size=8, unique_by=lambda t: t[0]),
       st.floats(0, 1))
def test_mmr_returns_a_permutation(items, lam):
    keys = [k for k, _ in items]
    rel = dict(items)
    out = mmr(keys, rel, lambda x, y: 0.5 if x < y else 0.2, lam=lam)
    assert sorted(out) == sorted(keys)


def test_tree_similarity():
    assert tree_similarity("src/a/x.py", "src/a/x.py") == 1.0
    assert tree_similarity("src/a/x.py", "src/a/y.py") == pytest.approx(2 / 3)
    assert tree_similarity("src/a/x.py", "docs/y.md") == 0.0


def test_location_similarity():
    assert location_similarity("src/a/x.py", "src/a/x.py", True) == 1.0
    assert location_similarity("src/a/x.py", "src/a/y.py", True) == pytest.approx(0.25)  # same folder, same kind
    assert location_similarity("src/a/x.py", "src/b/y.py", True) == pytest.approx(0.175)  # same tree (1 of 2 folders)
    assert location_similarity("src/a/x.py", "docs/y.md", False) == 0.0
    assert location_similarity("@nodes/decision/auth/1", "src/auth.py", False) == 0.0
