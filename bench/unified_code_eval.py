"""Code retrieval quality of unified search (issue 6) against the repository index alone.

The same real-history evaluation as ``bench/retrieval_eval.py`` (issue 3), reusing its functions:
for each of the latest N descriptive non-merge commits, the query is the commit subject and the
relevant set is the non-test source files it changed; the index is built at the commit's parent
(incrementally, oldest commit first). Three rankers, each collapsed to files in order of first
appearance:

- ``index``: ``autology_mcp.code.service.code_search`` (top 60 chunks), as in retrieval_eval.py;
- ``unified``: ``autology_mcp.retrieval.search(scope=["code"], limit=50)`` with a token budget
  too large to cut anything (ranking quality);
- ``grep``: retrieval_eval.py's grep-style baseline;
- four BM25 baselines (issue 15): plain FTS5 BM25 (porter unicode61, the subject's words OR-ed) over
  whole files and over the index's chunks collapsed to files, each as plain text
  (``bm25_files``, ``bm25_chunks``) and code-aware (camelCase split, stop words dropped:
  ``bm25_files_code``, ``bm25_chunks_code``).

Every ranker is also measured in the source view: its ranking with the non-source files (tests,
docs, examples, changelogs: ``retrieval_eval.is_source``) taken out, so that a baseline is not
penalised for ranking them (``source_view``), also split into a tuning part and a held-out part
(every third commit, oldest first): a ranking change is chosen on the first and reported on both.

It also counts the queries where unified search at ``limit=10`` returns fewer distinct files than
10 or than the files matching a query word (code-aware), whichever is smaller
(``unified_limit10_short_lists``), and the same counting only the files the scope admits
(``..._in_scope``: with scope=code, docs and changelogs are out of scope, as unified search leaves them out).

With ``--semantic DIR`` (issue 31), semantic recall is on in the work tree's store with the model in DIR;
the JSON says so. Run it with and without to see that code ranking does not move.

File-level Recall@1/5/10 and MRR@10, means over the commits. The goal (issue 6): unified search
with scope=code does at least as well as the index alone.

    python bench/unified_code_eval.py /work/.mirror/pallets+click/repo --workdir /tmp/autology-eval-click
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_eval import (  # noqa: E402  (bench/ is not a package)
    git,
    indexed_files,
    is_source,
    mean,
    metrics,
    prepare_history,
    bm25_baselines,
    ranked_grep_files,
    ranked_index_files,
)

from autology_mcp.code import service  # noqa: E402
from autology_mcp.retrieval.candidates import is_doc_path  # noqa: E402
from autology_mcp.semantic.state import clear_state  # noqa: E402

NO_BUDGET = 1_000_000
UNIFIED_LIMIT = 50  # autology_search's maximum


def ranked_unified_files(root: Path, subject: str, scope: list[str], limit: int = UNIFIED_LIMIT) -> tuple[list[str], str]:
    from autology_mcp.retrieval.engine import search

    answer = search(root, subject, scope=scope, limit=limit, max_tokens=NO_BUDGET)
    seen: list[str] = []
    for hit in answer["hits"]:
        path = hit.get("path")
        if hit.get("kind") in ("code", "doc") and path and path not in seen:
            seen.append(path)
    return seen, answer["verdict"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git repository (bare mirror or clone); it is not modified")
    ap.add_argument("--workdir", type=Path, help="work tree to check commits out in (default /tmp/autology-eval-<name>)")
    ap.add_argument("--commits", type=int, default=150)
    ap.add_argument("--scope", default="code", help="unified search scope, comma-separated (default code)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--per-query", action="store_true", help="print every query's MRR per ranker")
    ap.add_argument("--semantic", type=Path, help="a local model folder: semantic recall on in the work tree's store "
                                                  "(issue 31; the optional extra installed)")
    args = ap.parse_args()
    scope = [s.strip() for s in args.scope.split(",") if s.strip()]
    name, work, head, commits = prepare_history(args.repo, args.workdir, args.commits)
    clear_state(work)  # a work tree reused from a --semantic run ranks lexically again
    if args.semantic:
        from autology_mcp.semantic.runtime import enable

        enable(work, args.semantic)  # .autology survives each checkout's clean (-e .autology)
    rows: dict[str, list[dict]] = {name: [] for name in ("index", "unified", "grep", "bm25_files", "bm25_chunks",
                                                         "bm25_files_code", "bm25_chunks_code")}
    source_rows: dict[str, list[dict]] = {name: [] for name in rows}
    short_lists = 0  # queries where unified search at limit 10 gave fewer files than match a query word
    short_in_scope = 0  # the same, counting only the files the scope admits (scope=code leaves docs out)
    ms: dict[str, list[float]] = {"index": [], "unified": []}
    verdicts: dict[str, int] = {}
    per_query = []
    for c in reversed(commits):  # oldest first, so each build is incremental on the previous one
        git(work, "checkout", "-q", "-f", "--detach", c["parent"])
        git(work, "clean", "-q", "-f", "-d", "-x", "-e", ".autology")
        service.build_index(work)
        t = time.perf_counter()
        by_index = ranked_index_files(work, c["subject"])
        ms["index"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        by_unified, verdict = ranked_unified_files(work, c["subject"], scope)
        ms["unified"].append((time.perf_counter() - t) * 1000)
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        files = indexed_files(work)
        by_grep = ranked_grep_files(work, files, c["subject"])
        baselines = bm25_baselines(work, files, c["subject"])
        top10, _ = ranked_unified_files(work, c["subject"], scope, limit=10)
        short_lists += len(top10) < min(10, len(baselines["bm25_files_code"]))
        in_scope = [p for p in baselines["bm25_files_code"] if "docs" in scope or not is_doc_path(p)]
        short_in_scope += len(top10) < min(10, len(in_scope))
        m = {"index": metrics(by_index, c["relevant"]), "unified": metrics(by_unified, c["relevant"]),
             "grep": metrics(by_grep, c["relevant"])}
        m |= {name: metrics(ranked, c["relevant"]) for name, ranked in baselines.items()}
        # The source view: every ranking with its non-source files (tests, docs, changelogs) taken
        # out, so a baseline is not penalised for ranking them (issue 15's harder comparison).
        rankings = {"index": by_index, "unified": by_unified, "grep": by_grep, **baselines}
        source_m = {name: metrics([p for p in ranked if is_source(p)], c["relevant"]) for name, ranked in rankings.items()}
        for name, sm in source_m.items():
            source_rows[name].append(sm)
        for k, v in m.items():
            rows[k].append(v)
        per_query.append({**c, "verdict": verdict, "index_top5": by_index[:5], "unified_top5": by_unified[:5],
                          "unified_limit10_files": len(top10), **m,
                          "source_top5": {k: [p for p in rankings[k] if is_source(p)][:5] for k in ("index", "unified", "bm25_files")},
                          "source_mrr@10": {k: round(v["mrr@10"], 4) for k, v in source_m.items()}})
        if args.per_query:
            print(f"{c['commit'][:8]} " + " ".join(f"{k} {v['mrr@10']:.2f}" for k, v in m.items())
                  + f"  {c['subject']}", flush=True)
    results = {
        "repo": name, "head": head, "commits": len(commits), "unified_scope": scope,
        "semantic": str(args.semantic) if args.semantic else None,
        "mean_relevant_files": round(statistics.fmean(len(c["relevant"]) for c in commits), 2),
        "index": mean(rows["index"]), "unified": mean(rows["unified"]), "grep_baseline": mean(rows["grep"]),
        **{f"{name}_baseline": mean(rows[name]) for name in ("bm25_files", "bm25_chunks", "bm25_files_code", "bm25_chunks_code")},
        "unified_limit10_short_lists": short_lists,
        "unified_limit10_short_lists_in_scope": short_in_scope,
        "source_view": {name: mean(r) for name, r in source_rows.items()},
        # Every third commit, oldest first (index 2, 5, ...), is held out: tune on the rest.
        "source_view_tuning": {name: mean([x for i, x in enumerate(r) if i % 3 != 2]) for name, r in source_rows.items()},
        "source_view_held_out": {name: mean([x for i, x in enumerate(r) if i % 3 == 2]) for name, r in source_rows.items()},
        "all_view_tuning": {name: mean([x for i, x in enumerate(r) if i % 3 != 2]) for name, r in rows.items()},
        "all_view_held_out": {name: mean([x for i, x in enumerate(r) if i % 3 == 2]) for name, r in rows.items()},
        "query_ms_p50": {k: round(statistics.median(v), 1) for k, v in ms.items()},
        "unified_verdicts": verdicts,
    }
    u, i = rows["unified"], rows["index"]
    results["unified_vs_index_mrr@10"] = {
        "wins": sum(a["mrr@10"] > b["mrr@10"] for a, b in zip(u, i, strict=True)),
        "ties": sum(a["mrr@10"] == b["mrr@10"] for a, b in zip(u, i, strict=True)),
        "losses": sum(a["mrr@10"] < b["mrr@10"] for a, b in zip(u, i, strict=True)),
    }
    results["unified_at_least_index"] = {
        k: results["unified"][k] >= results["index"][k] for k in ("recall@1", "recall@5", "recall@10", "mrr@10")}
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps({**results, "per_query": per_query}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
