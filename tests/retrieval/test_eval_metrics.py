"""The knowledge benchmark's metrics on hand-made rankings, and its judged queries' sanity."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("knowledge_eval", REPO / "bench" / "knowledge_eval.py")
ke = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ke)


def test_ndcg_perfect_reversed_and_empty():
    grades = {"a": 2, "b": 1}
    assert ke.ndcg_at_k(["a", "b", "x"], grades) == pytest.approx(1.0)
    # reversed: DCG = 1/log2(2) + 3/log2(3); ideal = 3/log2(2) + 1/log2(3)
    expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert ke.ndcg_at_k(["b", "a"], grades) == pytest.approx(expected)
    assert ke.ndcg_at_k(["x", "y"], grades) == 0.0
    assert ke.ndcg_at_k([], grades) == 0.0
    assert ke.ndcg_at_k(["a"], {}) == 0.0


def test_ndcg_cuts_at_k_and_counts_repeats_once():
    grades = {"a": 1}
    ranked = [f"x{i}" for i in range(10)] + ["a"]
    assert ke.ndcg_at_k(ranked, grades, k=10) == 0.0
    assert ke.ndcg_at_k(ranked, grades, k=11) == pytest.approx(1 / math.log2(12))
    assert ke.ndcg_at_k(["x", "x", "a"], grades) == pytest.approx(1 / math.log2(3))


def test_recall_and_mrr():
    grades = {"a": 2, "b": 1, "c": 1, "d": 0}
    assert ke.recall_at_k(["x", "a", "y", "d", "b", "c"], grades, 5) == pytest.approx(2 / 3)
    assert ke.recall_at_k(["a", "a", "a", "a", "a", "b"], grades, 5) == pytest.approx(2 / 3)  # repeats count once
    assert ke.mrr_at_k(["x", "d", "c"], grades) == pytest.approx(1 / 3)  # grade 0 is not relevant
    assert ke.mrr_at_k(["x"] * 3, grades) == 0.0


def test_held_out_queries_are_new():
    main = json.loads((REPO / "bench" / "data" / "knowledge_queries.json").read_text())["queries"]
    held = json.loads((REPO / "bench" / "data" / "knowledge_queries_heldout.json").read_text())["queries"]
    assert not {q["query"].lower() for q in main} & {q["query"].lower() for q in held}


def test_plain_bm25_baseline_ranks_by_term_matches():
    class N:
        def __init__(self, id, title, content, tags=()):
            self.id, self.title, self.content, self.tags = id, title, content, list(tags)

    bm25 = ke.PlainBM25([N("1", "Cache", "evict the least recently used"), N("2", "Auth", "password hashing with argon2")])
    assert bm25("how are passwords hashed") == ["2"]
    assert bm25("zebra crossing") == []


@pytest.mark.parametrize(("name", "minimum", "why"), [("knowledge_queries.json", 40, 8), ("knowledge_queries_heldout.json", 30, 5)])
def test_judged_queries_name_real_nodes_and_are_not_title_copies(name, minimum, why):
    data = json.loads((REPO / "bench" / "data" / name).read_text())
    nodes = {}
    for path in (REPO / "examples" / "tonearm" / ".autology" / "nodes").glob("*/*.md"):
        title = re.search(r"^title: (.*)$", path.read_text(), re.M).group(1).strip("'\"")
        nodes[path.stem] = title.lower()
    queries = data["queries"]
    assert len(queries) >= minimum
    assert len({q["query"] for q in queries}) == len(queries)
    assert sum(q["kind"] == "why" for q in queries) >= why
    for q in queries:
        assert q["relevant"] and set(q["relevant"]) <= set(nodes), q["id"]
        assert set(q["relevant"].values()) <= {1, 2} and 2 in q["relevant"].values(), q["id"]
        assert q["query"].lower() not in nodes.values(), q["id"]


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_variant_sweep_fusion_by_reciprocal_rank():
    sweep = _bench_module("code_variant_sweep")
    ours, theirs = ["a.py", "b.py", "c.py"], ["c.py", "d.py"]
    # weight 0: our order, then the files only the other ranking has, by path
    assert sweep.fuse(ours, theirs, 0.0, 1) == ["a.py", "b.py", "c.py", "d.py"]
    # c.py: 1/4 + 1/2 beats a.py's 1/2 alone
    assert sweep.fuse(ours, theirs, 1.0, 1)[0] == "c.py"
    # equal scores break by path, so the fused list is the same on every run
    assert sweep.fuse(["b.py"], ["a.py"], 1.0, 60) == ["a.py", "b.py"]


def _commit(repo: Path, message: str, files: dict[str, str]) -> None:
    from core_helpers import git

    for name, body in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(body)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.mark.usefixtures("clean_env")
def test_code_rank_replay_gives_the_live_list_and_its_variants_reorder_it(tmp_path):
    """bench/code_rank_replay.py replays unified search's last steps over a captured search: with the
    shipped settings it gives exactly the list the live search gave, and a variant of the history prior
    (off) gives the order the live search gives with the prior turned off."""
    from core_helpers import git

    import autology_mcp.common.config as project_config
    from autology_mcp.code.service import build_index
    from autology_mcp.knowledge.service import Autology

    replay = _bench_module("code_rank_replay")
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    Autology.open(repo).close()
    retry = "def retry(call, attempts):\n    # retry the call, waiting between attempts\n    return call()\n"
    _commit(repo, "Add the retry helpers", {"src/retry_a.py": retry + "# retry retry\n", "src/retry_b.py": retry})
    _commit(repo, "Spread the waits with jitter so clients do not retry in lockstep", {"src/retry_b.py": retry + "SPREAD = 0.1\n"})
    build_index(repo)
    row = replay.capture_one(repo.resolve(), "the retry waits need more jitter")
    assert row["live"][:2] == ["src/retry_b.py", "src/retry_a.py"]  # the prior lifts the file the jitter commit touched
    assert replay.replay_files(row, {}) == row["live"]
    assert replay.replay_files(row, replay.VARIANTS["prior off"])[:2] == ["src/retry_a.py", "src/retry_b.py"]
    (repo / ".autology" / "config.toml").write_text("[retrieval]\nhistory_prior = 0\n")
    project_config._cache.clear()  # keyed by the file's stat: a quick write may share one
    assert replay.replay_files(row, replay.VARIANTS["prior off"]) == replay.ranked_unified_files(repo, row["query"], ["code"])[0]
    assert row["commits"][0][1] == ("src/retry_b.py",) and row["touch"]["src/retry_b.py"] == [0, 1]
    assert row["defines"]["src/retry_a.py"][0] > 0  # it defines retry(), a word of the query
