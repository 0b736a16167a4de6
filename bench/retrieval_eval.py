"""Retrieval quality of the repository index, judged by a real repository's history (issue 3).

For each of the latest N descriptive non-merge commits (default 150) of a repository:

- the query is the commit's subject (a trailing ``(#123)`` removed);
- the relevant set is the non-test source files the commit changed that existed at its parent
  (``.py`` files outside tests, docs and examples; status M or D);
- the index is built at the commit's parent (incrementally, commit after commit, oldest first)
  over the whole repository; a hit on a test, doc or changelog file is simply not relevant.

It reports file-level Recall@1/5/10 and MRR@10 for the index (chunk hits collapsed to files, in
order of first appearance) against a grep-style baseline over the same files: files ranked by how
many distinct query words they contain (case-insensitive substring, as ``grep -i -F``), then by
total occurrences, then by path.

A commit is "descriptive" when its subject has at least 4 words and does not start with one of
Merge/Bump/Release/Revert/Version/Prepare/pre-commit/[pre-commit.ci], and it changed 1..10
relevant files.

    git clone /work/.mirror/pallets+click/repo /tmp/click      # or any clone, bare or not
    python bench/retrieval_eval.py /tmp/click [--commits 150] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path

from autology_mcp.code import service
from autology_mcp.code.config import load_index_config
from autology_mcp.code.layout import IndexLocation
from autology_mcp.code.store import IndexDB
from autology_mcp.common.text import code_query_words, split_camel
from autology_mcp.common.text import code_query_words as query_words

SKIP_PREFIXES = ("merge", "bump", "release", "revert", "version", "prepare", "pre-commit", "[pre-commit")
MAX_RELEVANT = 10
KS = (1, 5, 10)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


# What counts as source in the relevant sets: code in a programming language, not tests, docs or
# examples by the usual conventions of Python, Go, JavaScript/TypeScript and Ruby.
SOURCE_EXTENSIONS = (".py", ".go", ".js", ".jsx", ".mjs", ".ts", ".tsx", ".rb", ".rs", ".java", ".kt", ".scala",
                     ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".php")
NOT_SOURCE_DIRS = {"tests", "test", "testing", "testdata", "spec", "__tests__", "docs", "doc", "docs_src", "examples", "example"}


def is_source(path: str) -> bool:
    if not path.endswith(SOURCE_EXTENSIONS):
        return False
    parts = path.split("/")
    name = parts[-1]
    if any(p in NOT_SOURCE_DIRS for p in parts[:-1]):
        return False
    stem = name.rsplit(".", 1)[0]
    return not (name.startswith("test_") or stem.endswith(("_test", "_spec")) or ".test." in name
                or ".spec." in name or name == "conftest.py")


def clean_subject(subject: str) -> str:
    return re.sub(r"\s*\(#\d+\)\s*$", "", subject).strip()


def select_commits(repo: Path, n: int) -> list[dict]:
    log = git(repo, "log", "--no-merges", "--no-renames", "--name-status", "--format=%x00%H %P%x00%s", "HEAD")
    out = []
    records = log.split("\0")
    # records: ["", "H P", "subject\n\nM\tpath...", "H P", "subject...", ...]
    for i in range(1, len(records) - 1, 2):
        ids = records[i].split()
        body = records[i + 1].strip("\n").split("\n")
        subject = clean_subject(body[0])
        if len(ids) != 2:
            continue
        files = []
        for line in body[1:]:
            if "\t" not in line:
                continue
            status, path = line.split("\t", 1)
            if status[0] in "MD" and is_source(path):
                files.append(path)
        if len(subject.split()) < 4 or subject.lower().startswith(SKIP_PREFIXES):
            continue
        if not 1 <= len(files) <= MAX_RELEVANT:
            continue
        out.append({"commit": ids[0], "parent": ids[1], "subject": subject, "relevant": sorted(set(files))})
        if len(out) == n:
            break
    return out


def ranked_index_files(root: Path, subject: str) -> list[str]:
    result = service.code_search(root, subject, top=60, refresh=False)
    seen: list[str] = []
    for hit in result["hits"]:
        if hit["path"] not in seen:
            seen.append(hit["path"])
    return seen


def ranked_grep_files(root: Path, files: list[str], subject: str) -> list[str]:
    terms = query_words(subject)
    scored = []
    for path in files:
        try:
            text = (root / path).read_text(encoding="utf-8", errors="replace").lower()
        except OSError:
            continue
        counts = [text.count(t) for t in terms]
        distinct = sum(1 for c in counts if c)
        if distinct:
            scored.append((-distinct, -sum(counts), path))
    scored.sort()
    return [p for _, _, p in scored]


_WORD = re.compile(r"[A-Za-z0-9]{2,}")


def _plain_bm25(docs: list[tuple[str, str]], subject: str, code_aware: bool = False) -> list[str]:
    """Keys of ``docs`` (key, text) by plain FTS5 BM25 (porter unicode61, the subject's words OR-ed),
    best first, each key once. Plain: every word of the subject, text as it is. ``code_aware``:
    camelCase split in the texts (``_`` and punctuation split already) and the query's stop words
    dropped, as the code index's own BM25 column sees them, with none of its other ranking."""
    if code_aware:
        words = code_query_words(subject)
        docs = [(key, split_camel(text)) for key, text in docs]
    else:
        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(subject)))
    if not words or not docs:
        return []
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(key UNINDEXED, body, tokenize = 'porter unicode61')")
    conn.executemany("INSERT INTO t (key, body) VALUES (?, ?)", docs)
    match = " OR ".join('"' + w + '"' for w in words)
    ranked = [k for (k,) in conn.execute("SELECT key FROM t WHERE t MATCH ? ORDER BY bm25(t), key", (match,))]
    conn.close()
    return list(dict.fromkeys(ranked))


def file_texts(root: Path, files: list[str]) -> list[tuple[str, str]]:
    docs = []
    for path in files:
        try:
            docs.append((path, (root / path).read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return docs


def chunk_texts(root: Path) -> list[tuple[str, str]]:
    """The index's own chunks, as (path, text)."""
    cfg = load_index_config(root)
    with IndexDB(IndexLocation.of(root, cfg).db, create=False) as db:
        return db.conn.execute("SELECT path, text FROM chunks").fetchall()


def bm25_baselines(root: Path, files: list[str], subject: str) -> dict[str, list[str]]:
    """Plain BM25 over whole files and over the index's chunks (collapsed to files), as plain text and
    code-aware: four baselines; the best of them on each metric is the one to beat."""
    by_file, by_chunk = file_texts(root, files), chunk_texts(root)
    return {
        "bm25_files": _plain_bm25(by_file, subject),
        "bm25_chunks": _plain_bm25(by_chunk, subject),
        "bm25_files_code": _plain_bm25(by_file, subject, code_aware=True),
        "bm25_chunks_code": _plain_bm25(by_chunk, subject, code_aware=True),
    }


def metrics(ranked: list[str], relevant: list[str]) -> dict:
    rel = set(relevant)
    out = {f"recall@{k}": len(rel & set(ranked[:k])) / len(rel) for k in KS}
    rr = 0.0
    for i, path in enumerate(ranked[:10], 1):
        if path in rel:
            rr = 1.0 / i
            break
    out["mrr@10"] = rr
    return out


def mean(rows: list[dict]) -> dict:
    return {k: round(statistics.fmean(r[k] for r in rows), 4) for k in rows[0]} if rows else {}


def indexed_files(root: Path) -> list[str]:
    cfg = load_index_config(root)
    with IndexDB(IndexLocation.of(root, cfg).db, create=False) as db:
        return [p for (p,) in db.conn.execute("SELECT path FROM files WHERE skipped IS NULL ORDER BY path")]


def prepare_history(repo: Path, workdir: Path | None, count: int) -> tuple[str, Path, str, list[dict]]:
    """A work tree of ``repo`` (cloned once, checked out at its head) and the ``count`` commits to
    evaluate, newest first: (repository name, work tree, head commit, commits)."""
    src = repo.resolve()
    name = src.name if src.name != "repo" else src.parent.name
    work = workdir or Path(f"/tmp/autology-eval-{name}")
    if not (work / ".git").exists():
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(src), str(work)], check=True)
    head = git(work, "rev-parse", "origin/HEAD" if git(work, "branch", "-r").strip() else "HEAD").strip()
    git(work, "checkout", "-q", "-f", "--detach", head)
    commits = select_commits(work, count)
    print(f"{name}: {len(commits)} commits from {commits[-1]['commit'][:10]} to {commits[0]['commit'][:10]}",
          flush=True)
    return name, work, head, commits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git repository (bare mirror or clone); it is not modified")
    ap.add_argument("--workdir", type=Path, help="work tree to check commits out in (default /tmp/autology-eval-<name>)")
    ap.add_argument("--commits", type=int, default=150)
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--per-query", action="store_true", help="print every query's ranks")
    args = ap.parse_args()
    name, work, head, commits = prepare_history(args.repo, args.workdir, args.commits)
    idx_rows, grep_rows, per_query = [], [], []
    build_s = 0.0
    query_ms = []
    for c in reversed(commits):  # oldest first, so each build is incremental on the previous one
        git(work, "checkout", "-q", "-f", "--detach", c["parent"])
        git(work, "clean", "-q", "-f", "-d", "-x", "-e", ".autology")
        t = time.perf_counter()
        service.build_index(work)
        build_s += time.perf_counter() - t
        t = time.perf_counter()
        ranked = ranked_index_files(work, c["subject"])
        query_ms.append((time.perf_counter() - t) * 1000)
        baseline = ranked_grep_files(work, indexed_files(work), c["subject"])
        mi, mg = metrics(ranked, c["relevant"]), metrics(baseline, c["relevant"])
        idx_rows.append(mi)
        grep_rows.append(mg)
        per_query.append({**c, "index_top5": ranked[:5], "grep_top5": baseline[:5], "index": mi, "grep": mg})
        if args.per_query:
            print(f"{c['commit'][:8]} idx mrr {mi['mrr@10']:.2f} grep {mg['mrr@10']:.2f}  {c['subject']}")
    results = {
        "repo": name, "head": head, "commits": len(commits),
        "mean_relevant_files": round(statistics.fmean(len(c["relevant"]) for c in commits), 2),
        "index": mean(idx_rows), "grep_baseline": mean(grep_rows),
        "index_build_total_s": round(build_s, 1),
        "query_ms_p50": round(statistics.median(query_ms), 1),
        "config": "defaults (no [tool.autology.index] table in the evaluated repositories)",
    }
    results["index_beats_baseline"] = {
        k: results["index"][k] > results["grep_baseline"][k] for k in ("recall@10", "mrr@10")}
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps({**results, "per_query": per_query}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
