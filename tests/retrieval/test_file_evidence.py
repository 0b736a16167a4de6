"""A code chunk's index score in unified search is partly its file's (retrieval.channels.with_file_evidence)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from autology_mcp.retrieval.channels import FILE_DECAY, with_file_evidence


@dataclass
class Chunk:
    path: str


def kept(rows: list[tuple[str, float]]) -> list[tuple[Chunk, dict]]:
    return [(Chunk(path), {"relative": rel, "bm25": rel}) for path, rel in rows]


def test_a_file_with_several_matching_chunks_overtakes_one_with_a_single_equal_chunk() -> None:
    rows = kept([("a.py", 1.0), ("b.py", 0.95), ("b.py", 0.9), ("b.py", 0.8)])
    out = with_file_evidence(rows, 0.3)
    by = {(c.path, p["bm25"]): p["relative"] for c, p in out}
    # b.py's file score: 0.95 + 0.9·0.6 + 0.8·0.36 = 1.778, the best; a.py's: 1.0
    assert by[("b.py", 0.95)] == 0.7 * 0.95 + 0.3 * 1.0
    assert by[("a.py", 1.0)] == 0.7 * 1.0 + 0.3 * (1.0 / (0.95 + 0.9 * FILE_DECAY + 0.8 * FILE_DECAY**2))
    assert by[("b.py", 0.95)] > by[("a.py", 1.0)]


def test_share_zero_changes_nothing() -> None:
    rows = kept([("a.py", 1.0), ("b.py", 0.5)])
    assert with_file_evidence(rows, 0.0) == rows
    assert with_file_evidence([], 0.3) == []


@given(st.lists(st.tuples(st.sampled_from(["a.py", "b.py", "c/d.py"]), st.floats(0.01, 1.0)), min_size=1, max_size=30),
       st.floats(0.0, 1.0))
def test_order_and_items_kept_and_scores_stay_in_range(rows, share) -> None:
    before = kept(rows)
    after = with_file_evidence(before, share)
    assert [c for c, _ in after] == [c for c, _ in before]
    for (_, p0), (_, p1) in zip(before, after):
        assert 0.0 <= p1["relative"] <= max(1.0, p0["relative"]) + 1e-9
        assert p1["bm25"] == p0["bm25"]  # the other parts are untouched
