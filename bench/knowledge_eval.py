"""Knowledge retrieval quality (issue 6): unified search against plain BM25 over the nodes.

The judged queries are ``bench/data/knowledge_queries.json``: 51 queries over the example store
``examples/tonearm`` (51 nodes), each with graded relevant node ids (2 answers the query, 1 is
related and useful; unlisted nodes are not relevant). They were written from the nodes before any
search was run over them: paraphrases and symptoms rather than titles, and "why" questions whose
answer spans two nodes. ``bench/data/knowledge_queries_heldout.json`` holds 30 more, written after
the engine's defaults had been tuned on the first set and before any search was run on them
(``--queries`` picks the file).

Rankers, each returning node ids best first:

- ``unified``: ``autology_mcp.retrieval.search`` (scope nodes by default, limit 10, a budget too
  large to cut anything), its node hits in order; ``unified_default_budget``: the same with the
  default ``max_tokens`` (what a plain call returns: the budget may cut the last hits);
- ``bm25``: the baseline, plain SQLite FTS5 BM25 over title + content + tags of every node
  (same tokenizer as the node index: porter unicode61 remove_diacritics 2; equal column weights; no
  boosts, no status factor), the query's terms (stop words dropped) OR-ed;
- ``autology_query``: the existing ``autology_query`` ranking, as a second reference.

Metrics (means over the queries): nDCG@10 with gain 2^grade - 1, Recall@5 (share of a query's
relevant nodes, any grade, in the top 5), MRR@10 (first relevant node). The store is copied to a
temporary directory first, so nothing is written into examples/.

    python bench/knowledge_eval.py [--queries FILE] [--scope nodes] [--per-query] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "data" / "knowledge_queries.json"
REPO = HERE.parent
NO_BUDGET = 1_000_000  # ranking quality: no hit is cut by the token budget


# ------------------------------------------------------------------------------ metrics


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with gain 2^grade - 1; ids repeated in ``ranked`` count once (the first time)."""
    seen: set[str] = set()
    gains = []
    for node_id in ranked:
        if node_id in seen:
            continue
        seen.add(node_id)
        gains.append(2 ** grades.get(node_id, 0) - 1)
        if len(gains) == k:
            break
    ideal = dcg(sorted((2**g - 1 for g in grades.values() if g > 0), reverse=True)[:k])
    return dcg(gains) / ideal if ideal else 0.0


def recall_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int = 5) -> float:
    relevant = {n for n, g in grades.items() if g > 0}
    return len(relevant & set(list(dict.fromkeys(ranked))[:k])) / len(relevant) if relevant else 0.0


def mrr_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int = 10) -> float:
    for i, node_id in enumerate(list(dict.fromkeys(ranked))[:k], 1):
        if grades.get(node_id, 0) > 0:
            return 1.0 / i
    return 0.0


def evaluate(ranked: Sequence[str], grades: Mapping[str, int]) -> dict[str, float]:
    return {
        "ndcg@10": ndcg_at_k(ranked, grades, 10),
        "recall@5": recall_at_k(ranked, grades, 5),
        "mrr@10": mrr_at_k(ranked, grades, 10),
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.fmean(r[k] for r in rows), 4) for k in rows[0]} if rows else {}


# ------------------------------------------------------------------------------ rankers


def write_store(root: Path, nodes) -> None:
    """``nodes`` (KnowledgeNode) as files in a new store at ``root``, its cache built: benchmark data
    written straight to the store, without the capture tool's checks."""
    from autology_mcp.knowledge.markdown import render_node
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root, durable=False)
    store.init()
    for node in nodes:
        (store.paths.type_dir(node.type) / f"{node.id}.md").write_text(render_node(node), encoding="utf-8")
    store.rebuild()
    store.close()


class PlainBM25:
    """FTS5 BM25 over title + content + tags, no boosts: the baseline."""

    def __init__(self, nodes):
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, title, content, tags, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self.conn.executemany(
            "INSERT INTO t (id, title, content, tags) VALUES (?, ?, ?, ?)",
            [(n.id, n.title, n.content, " ".join(n.tags)) for n in nodes],
        )

    def __call__(self, query: str, k: int = 10) -> list[str]:
        from autology_mcp.common.text import node_query_terms as query_terms

        terms = query_terms(query)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self.conn.execute("SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t), id LIMIT ?", (match, k)).fetchall()
        return [r[0] for r in rows]


def unified_ranker(root: Path, store, scope: list[str] | None, max_tokens: int | None) -> Callable[[str], list[str]]:
    from autology_mcp.retrieval.engine import search

    def rank(query: str) -> list[str]:
        answer = search(root, query, scope=scope, limit=10, max_tokens=max_tokens, store=store)
        return [h["node_id"] for h in answer["hits"] if h.get("kind") == "node" and h.get("node_id")]

    return rank


def autology_query_ranker(autology) -> Callable[[str], list[str]]:
    def rank(query: str) -> list[str]:
        return [hit.node.id for hit in autology.query(query, limit=10)]

    return rank


# ------------------------------------------------------------------------------ main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=REPO / "examples" / "tonearm", help="project root holding .autology/")
    ap.add_argument("--queries", type=Path, default=QUERIES)
    ap.add_argument("--scope", default="nodes", help="unified search scope, comma-separated, or 'all' (default nodes)")
    ap.add_argument("--per-query", action="store_true", help="print each query's nDCG@10 per ranker")
    ap.add_argument("--json", type=Path, help="write the results (with per-query rankings) here")
    args = ap.parse_args()

    from autology_mcp.knowledge.service import Autology

    judged = json.loads(args.queries.read_text(encoding="utf-8"))
    queries = judged["queries"]
    scope = None if args.scope == "all" else [s.strip() for s in args.scope.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="autology-knowledge-eval-") as tmp:
        root = Path(tmp) / "project"
        shutil.copytree(args.store / ".autology" / "nodes", root / ".autology" / "nodes")
        autology = Autology.open(root)
        try:
            known = {n.id for n in autology.store.index.all_nodes()}
            unknown = sorted({n for q in queries for n in q["relevant"]} - known)
            if unknown:
                raise SystemExit(f"judgments name nodes the store does not have: {unknown[:5]}")
            rankers = {
                "unified": unified_ranker(root, autology.store, scope, NO_BUDGET),
                "unified_default_budget": unified_ranker(root, autology.store, scope, None),
                "bm25": PlainBM25(list(autology.store.index.all_nodes())),
                "autology_query": autology_query_ranker(autology),
            }
            rows: dict[str, list[dict[str, float]]] = {name: [] for name in rankers}
            times: dict[str, list[float]] = {name: [] for name in rankers}
            per_query = []
            for q in queries:
                grades = q["relevant"]
                entry = {"id": q["id"], "kind": q["kind"], "query": q["query"], "relevant": grades}
                for name, rank in rankers.items():
                    rank(q["query"])  # warm
                    t = time.perf_counter()
                    ranked = rank(q["query"])
                    times[name].append((time.perf_counter() - t) * 1000)
                    m = evaluate(ranked, grades)
                    rows[name].append(m)
                    entry[name] = {"top10": ranked[:10], **{k: round(v, 4) for k, v in m.items()}}
                per_query.append(entry)
                if args.per_query:
                    cells = "  ".join(f"{n} {entry[n]['ndcg@10']:.2f}" for n in rankers)
                    print(f"{q['id']} {cells}  {q['query']}")
        finally:
            autology.close()

    kinds = sorted({q["kind"] for q in queries})
    results = {
        "store": str(args.store),
        "queries": len(queries),
        "unified_scope": args.scope,
        "mean": {name: mean(r) for name, r in rows.items()},
        "by_kind": {
            kind: {
                name: mean([r for r, q in zip(rows[name], queries, strict=True) if q["kind"] == kind])
                for name in rankers
            }
            | {"queries": sum(1 for q in queries if q["kind"] == kind)}
            for kind in kinds
        },
        "query_ms_p50": {name: round(statistics.median(t), 2) for name, t in times.items()},
    }
    u, b = rows["unified"], rows["bm25"]
    results["unified_vs_bm25_ndcg@10"] = {
        "wins": sum(x["ndcg@10"] > y["ndcg@10"] + 1e-9 for x, y in zip(u, b, strict=True)),
        "ties": sum(abs(x["ndcg@10"] - y["ndcg@10"]) <= 1e-9 for x, y in zip(u, b, strict=True)),
        "losses": sum(x["ndcg@10"] < y["ndcg@10"] - 1e-9 for x, y in zip(u, b, strict=True)),
    }
    results["unified_beats_bm25"] = {
        k: results["mean"]["unified"][k] > results["mean"]["bm25"][k] for k in ("ndcg@10", "recall@5")
    }
    print(json.dumps(results, indent=2))
    worst = sorted(per_query, key=lambda e: e["unified"]["ndcg@10"] - e["bm25"]["ndcg@10"])[:8]
    print("\nlargest unified losses against bm25 (nDCG@10):")
    for e in worst:
        delta = e["unified"]["ndcg@10"] - e["bm25"]["ndcg@10"]
        if delta >= 0:
            break
        print(f"  {e['id']} {delta:+.2f}  {e['query']}")
    if args.json:
        args.json.write_text(json.dumps({**results, "per_query": per_query}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
