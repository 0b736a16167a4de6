"""The history channel on questions answered by a commit (issue 41): does the agent get the commit?

    python bench/history_eval.py --mirrors /work/.mirror --workdir /tmp/history-eval [--json out.json]

The questions are bench/history_sets.py's: commit messages that cite one earlier commit, the citation
removed; the answer is the cited commit. Each repository is cloned once into ``--workdir``; each
question is asked with the work tree at the citing commit's parent (oldest question first, so each
code index build and history sync is incremental), in a store with **no knowledge node at all** (day
one) and the code index built, as a new user would have it. Per question:

- the prompt hook (``user_prompt_submit``, a new session each time): does its block show the commit;
- ``autology_search`` with its defaults (every scope): the commit's rank among the hits;
- plain BM25 over the same commit texts (FTS5, subject and body alike, the question's words OR-ed):
  the baseline's rank.

Reported per split (tuning, held out): the share the hook shows, top-3 and MRR@10 of search and of plain
BM25. Only the tuning part may be looked at while choosing: the held-out part is printed with
``--held-out`` only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import history_sets  # noqa: E402

from autology_mcp.code import service as code_index  # noqa: E402
from autology_mcp.common.text import node_query_terms  # noqa: E402
from autology_mcp.history.index import HistoryIndex  # noqa: E402
from autology_mcp.hooks.prompt import user_prompt_submit  # noqa: E402
from autology_mcp.knowledge.service import Autology  # noqa: E402
from autology_mcp.retrieval.engine import search  # noqa: E402


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout.decode("utf-8", "replace")


def plain_bm25(root: Path, question: str, limit: int = 10) -> list[str]:
    """Plain FTS5 BM25 over the indexed commits' subject and body (equal weights, no files)."""
    terms = node_query_terms(question)
    if not terms:
        return []
    index = HistoryIndex(root)
    try:
        rows = index.conn.execute(
            "SELECT c.sha FROM commits_fts JOIN commits c ON c.rowid = commits_fts.rowid WHERE commits_fts MATCH ?"
            " ORDER BY bm25(commits_fts, 1.0, 1.0, 0.0) LIMIT ?",
            (" OR ".join('"' + t.replace('"', '""') + '"' for t in terms), limit)).fetchall()
    finally:
        index.close()
    return [r[0] for r in rows]


def rank(shas: list[str], answer: str) -> int | None:
    return next((i + 1 for i, s in enumerate(shas[:10]) if s == answer), None)


def ask(root: Path, q: dict) -> dict:
    out = user_prompt_submit({"session_id": uuid.uuid4().hex, "cwd": str(root), "prompt": q["question"]}, root)
    block = out["hookSpecificOutput"]["additionalContext"] if out else ""
    answer = search(root, q["question"], limit=10)
    found = [h["commit"]["sha"] for h in answer["hits"] if h["kind"] == "commit"]
    ranks = [h["commit"]["sha"] if h["kind"] == "commit" else h["ref"] for h in answer["hits"]]
    return {
        **q,
        "hook_shows": f"- commit {q['answer'][:10]} " in block,
        "hook_injected": bool(block),
        "search_rank": rank(ranks, q["answer"]),
        "search_commit_rank": rank(found, q["answer"]),
        "verdict": answer["verdict"],
        "bm25_rank": rank(plain_bm25(root, q["question"]), q["answer"]),
    }


def run_repo(name: str, data: dict, workdir: Path) -> list[dict]:
    work = workdir / name.replace("/", "+")
    if not (work / ".git").exists():
        subprocess.run(["git", "clone", "-q", "--no-checkout", data["mirror"], str(work)], check=True)
    rows = []
    for q in sorted(data["questions"], key=lambda q: int(git(work, "rev-list", "--count", q["parent"]).strip())):
        git(work, "checkout", "-q", "-f", "--detach", q["parent"])
        git(work, "clean", "-q", "-f", "-d", "-x", "-e", ".autology")
        Autology.open(work).close()
        code_index.build_index(work)
        t = time.perf_counter()
        row = ask(work, q)
        row["ms"] = round((time.perf_counter() - t) * 1000, 1)
        row["repo"] = name
        rows.append(row)
    return rows


def figures(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"questions": 0}

    def mrr(key: str) -> float:
        return round(statistics.fmean(1 / r[key] if r[key] else 0.0 for r in rows), 3)

    return {
        "questions": n,
        "hook_shows": round(sum(r["hook_shows"] for r in rows) / n, 3),
        "hook_injected": round(sum(r["hook_injected"] for r in rows) / n, 3),
        "search_top3": round(sum(1 for r in rows if r["search_rank"] and r["search_rank"] <= 3) / n, 3),
        "search_mrr@10": mrr("search_rank"),
        "bm25_top3": round(sum(1 for r in rows if r["bm25_rank"] and r["bm25_rank"] <= 3) / n, 3),
        "bm25_mrr@10": mrr("bm25_rank"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--repo", action="append", help="only these repositories (owner/name; repeat)")
    parser.add_argument("--held-out", action="store_true", help="also report the held-out part (not while choosing)")
    args = parser.parse_args()
    start = os.getloadavg()
    sets = history_sets.sets(args.mirrors, args.repo or history_sets.REPOS)
    rows = []
    for name, data in sets.items():
        t = time.perf_counter()
        rows += run_repo(name, data, args.workdir)
        print(f"  {name}@{data['head']}: {len(data['questions'])} questions in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)
    print(f"# load {' '.join(f'{x:.2f}' for x in start)} -> {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out = {}
    for split in ("tuning", "held-out") if args.held_out else ("tuning",):
        part = [r for r in rows if r["split"] == split]
        out[split] = {"all": figures(part), **{name: figures([r for r in part if r["repo"] == name]) for name in sets}}
        f = out[split]["all"]
        print(f"{split}: {f['questions']} questions; hook shows the commit {f['hook_shows']:.1%} (injects "
              f"{f['hook_injected']:.1%}); search top 3 {f['search_top3']:.1%}, MRR@10 {f['search_mrr@10']:.3f}; "
              f"plain BM25 top 3 {f['bm25_top3']:.1%}, MRR@10 {f['bm25_mrr@10']:.3f}")
    if args.json:
        args.json.write_text(json.dumps({"figures": out, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
