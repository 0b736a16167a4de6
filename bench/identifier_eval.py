"""Looking up an identifier (issue 15): the query is a name defined in the project, the relevant file
is the one that defines it.

For a repository at its head, every non-test Python source file is parsed (``ast``); the names it
defines (functions, classes, methods, module-level assignments) that the code index treats as
identifiers (``autology_mcp.common.text.code_identifiers``: an inner or leading ``_``, an inner
capital) and that exactly one file defines are the candidates. A fixed sample of them (by a hash
of the name, so the same repository gives the same queries) is asked, each name as written
(``iter_bytes``, ``HTTPError``), and the defining file is the one to find. Relevance is not "holds
the name": the uses of a name match it whole too, so ranking its definition first is the test.

Rankers, each collapsed to files in order of first appearance: ``index`` (``code_search``, top 60),
``unified`` (``autology_search`` with scope=code), and the four plain BM25 baselines of
bench/retrieval_eval.py (whole files and chunks, plain and code-aware). File-level Recall@1/5/10 and
MRR@10, means over the queries. Nothing was tuned on this set: the exact part's weight (1.0) was
set before it ran.

    python bench/identifier_eval.py /work/.mirror/encode+httpx/repo --workdir /tmp/ident-httpx --json out.json
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_eval import bm25_baselines, git, indexed_files, is_source, mean, metrics, ranked_index_files  # noqa: E402
from unified_code_eval import ranked_unified_files  # noqa: E402

from autology_mcp.code import service  # noqa: E402

INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]{2}")


def identifier_shaped(name: str) -> bool:
    """The rule of ``autology_mcp.common.text.code_identifiers``, restated here so that this script
    also runs on code older than it (the "before" side)."""
    core = name.strip("_")
    return len(core) >= 3 and not name[0].isdigit() and ("_" in core or name.startswith("_") or bool(INNER_CAPITAL.search(core)))


def definitions(root: Path, files: list[str]) -> dict[str, set[str]]:
    """name -> the source files that define it (functions, classes, methods, module-level names)."""
    defined: dict[str, set[str]] = {}
    for path in files:
        if not is_source(path):
            continue
        try:
            tree = ast.parse((root / path).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
        for name in names:
            defined.setdefault(name, set()).add(path)
    return defined


def sample(defined: dict[str, set[str]], count: int) -> list[tuple[str, str]]:
    """(name, its one defining file) for up to ``count`` identifier-shaped names defined once."""
    once = [(name, next(iter(files))) for name, files in defined.items()
            if len(files) == 1 and identifier_shaped(name) and not name.startswith("__")]
    once.sort(key=lambda nf: hashlib.sha256(nf[0].encode()).hexdigest())
    return once[:count]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git repository (bare mirror or clone); it is not modified")
    ap.add_argument("--workdir", type=Path, required=True, help="where to clone it")
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--per-query", action="store_true")
    args = ap.parse_args()
    work = args.workdir
    if not (work / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(args.repo.resolve()), str(work)], check=True)
    head = git(work, "rev-parse", "HEAD").strip()
    service.build_index(work)
    files = indexed_files(work)
    queries = sample(definitions(work, files), args.queries)
    print(f"{args.repo}: head {head[:10]}, {len(queries)} identifiers defined in one source file", flush=True)
    rows: dict[str, list[dict]] = {}
    per_query = []
    t0 = time.perf_counter()
    for name, path in queries:
        ranked = {"index": ranked_index_files(work, name), "unified": ranked_unified_files(work, name, ["code"])[0]}
        ranked.update(bm25_baselines(work, files, name))
        scores = {k: metrics(v, [path]) for k, v in ranked.items()}
        for k, m in scores.items():
            rows.setdefault(k, []).append(m)
        per_query.append({"name": name, "file": path, "mrr": {k: m["mrr@10"] for k, m in scores.items()},
                          "unified_top3": ranked["unified"][:3]})
        if args.per_query:
            print(f"  {name:40s} unified {scores['unified']['mrr@10']:.2f} index {scores['index']['mrr@10']:.2f}"
                  f" bm25_files {scores['bm25_files']['mrr@10']:.2f}  {path}")
    results = {"repo": str(args.repo), "head": head, "queries": len(queries),
               "seconds": round(time.perf_counter() - t0, 1), **{k: mean(v) for k, v in rows.items()}}
    for k in rows:
        m = results[k]
        print(f"{k:18s} MRR@10 {m['mrr@10']:.3f}  R@1 {m['recall@1']:.3f}  R@10 {m['recall@10']:.3f}")
    if args.json:
        args.json.write_text(json.dumps({**results, "per_query": per_query}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
