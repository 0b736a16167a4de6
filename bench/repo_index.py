"""Repository index benchmark (issue 3) on a large real repository, by default sympy/sympy.

Point it at a local git clone (nothing of it is committed here):

    git clone https://github.com/sympy/sympy /tmp/sympy && git -C /tmp/sympy checkout e950d313a932
    python bench/repo_index.py /tmp/sympy [--queries 200] [--json out.json]

It measures, each phase in a fresh Python process so peak RSS is per phase:

1. full build (``.autology/cache/index`` deleted first): time, files/s, peak RSS (main process and
   the largest worker process);
2. incremental build after changing 1 file and after changing 50 files (a comment appended to
   Python files): in-process build time, and the same edit again through ``autology index build``
   (wall time, interpreter start-up included); changes are reverted and the index brought back;
3. query latency over N queries (the subjects of the repository's latest non-merge commits) in one
   warm process: the plain query, and the query as the MCP tool runs it (size/mtime refresh first);
4. the same queries with ``git grep`` (``-I -i -c -F`` with one ``-e`` per query word), as a
   subprocess, side by side;
5. index size on disk.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PINNED_SYMPY_COMMIT = "e950d313a932bc6cccbc95376b3821cd2f8b5af4"  # sympy master, 2026-08-22
TARGETS = {"full_build_s": 30.0, "incremental_1_file_s": 1.0, "query_p50_ms": 30.0, "peak_rss_mb": 500.0}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from autology_mcp.code import service
root = Path(sys.argv[1])
t = time.perf_counter()
summary = service.build_index(root, rebuild=sys.argv[2] == "rebuild")
wall = time.perf_counter() - t
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"summary": summary, "build_s": wall, "rss_main_mb": me}))
"""

QUERY_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from autology_mcp.code import service
root = Path(sys.argv[1])
queries = json.loads(Path(sys.argv[2]).read_text())
out = {}
for mode, refresh in (("query", False), ("query_with_refresh", True)):
    service.code_search(root, queries[0], top=10, refresh=refresh)  # warm-up
    times = []
    for q in queries:
        t = time.perf_counter()
        service.code_search(root, q, top=10, refresh=refresh)
        times.append(time.perf_counter() - t)
    out[mode] = times
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def stats_ms(samples: list[float]) -> dict:
    ms = sorted(s * 1000 for s in samples)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[max(0, math.ceil(0.95 * len(ms)) - 1)], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants (Linux /proc), in MB."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def run_child(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; its JSON result plus the peak RSS of its process tree
    (sampled every 20 ms: the main process and any worker processes together)."""
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid))
        time.sleep(0.02)
    out, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"child failed:\n{err}")
    result = json.loads(out.strip().splitlines()[-1])
    result["tree_peak_rss_mb"] = round(peak, 1)
    return result


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def commit_queries(repo: Path, n: int) -> list[str]:
    subjects = git(repo, "log", "--no-merges", f"-n{n * 3}", "--format=%s").splitlines()
    seen: list[str] = []
    for s in subjects:
        if len(s.split()) >= 3 and s not in seen:
            seen.append(s)
        if len(seen) == n:
            break
    return seen


def touch(repo: Path, files: list[str]) -> None:
    for f in files:
        with open(repo / f, "a", encoding="utf-8") as fh:
            fh.write("\n# benchmark edit: incremental rebuild\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git clone (sympy at the pinned commit by default)")
    ap.add_argument("--commit", default=PINNED_SYMPY_COMMIT, help="expected HEAD (checked, not checked out)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()
    repo = args.repo.resolve()
    head = git(repo, "rev-parse", "HEAD").strip()
    if args.commit and head != args.commit:
        print(f"warning: HEAD is {head}, not the pinned {args.commit}", file=sys.stderr)
    if git(repo, "status", "--porcelain", "--untracked-files=no").strip():
        sys.exit("the clone has uncommitted changes; the benchmark edits and reverts files, so start clean")
    py_files = [p for p in git(repo, "ls-files", "*.py").splitlines() if "/tests/" not in p]
    results: dict = {
        "repo": str(repo), "head": head, "python": platform.python_version(), "cpus": os.cpu_count(),
        "platform": platform.platform(), "tracked_files": len(git(repo, "ls-files").splitlines()),
        "targets": TARGETS, "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }

    shutil.rmtree(repo / ".autology" / "cache" / "index", ignore_errors=True)
    full = run_child(CHILD, str(repo), "build")
    s = full["summary"]
    results["full_build"] = {
        "seconds": round(full["build_s"], 2), "files_indexed": s["files"], "files_skipped": s["files_skipped"],
        "files_per_s": round((s["files"] + s["files_skipped"]) / full["build_s"], 1), "chunks": s["chunks"],
        "symbols": s["symbols"], "rss_main_mb": round(full["rss_main_mb"], 1),
        "peak_rss_process_tree_mb": full["tree_peak_rss_mb"],
    }
    print(f"full build: {results['full_build']}", flush=True)
    index_dir = Path(s["index_dir"])
    results["index_size_mb"] = round(dir_size(index_dir) / 1e6, 1)

    noop = run_child(CHILD, str(repo), "build")
    results["noop_build_s"] = round(noop["build_s"], 3)
    for n in (1, 50):
        chosen = py_files[:: max(1, len(py_files) // n)][:n]
        touch(repo, chosen)
        try:
            inc = run_child(CHILD, str(repo), "build")
        finally:
            git(repo, "checkout", "--", *chosen)
        run_child(CHILD, str(repo), "build")  # back to the committed state
        assert inc["summary"]["rebuilt"] == n, inc["summary"]
        touch(repo, chosen)  # the same edit again, through the CLI (wall time includes interpreter start-up)
        try:
            t = time.perf_counter()
            cli = subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(repo), "index", "build"],
                                 capture_output=True, text=True)
            cli_s = time.perf_counter() - t
        finally:
            git(repo, "checkout", "--", *chosen)
        run_child(CHILD, str(repo), "build")
        results[f"incremental_{n}"] = {"seconds": round(inc["build_s"], 3), "rebuilt": inc["summary"]["rebuilt"],
                                       "cli_wall_s": round(cli_s, 3), "cli_rc": cli.returncode}
        print(f"incremental after {n} file(s): {results[f'incremental_{n}']}", flush=True)

    queries = commit_queries(repo, args.queries)
    qfile = index_dir.parent / "bench_queries.json"
    qfile.write_text(json.dumps(queries))
    q = run_child(QUERY_CHILD, str(repo), str(qfile))
    results["queries"] = {"n": len(queries), "source": "latest non-merge commit subjects",
                          "query": stats_ms(q["query"]), "query_with_refresh": stats_ms(q["query_with_refresh"]),
                          "rss_mb": round(q["rss_mb"], 1), "peak_rss_process_tree_mb": q["tree_peak_rss_mb"]}
    print(f"queries: {results['queries']}", flush=True)
    from autology_mcp.common.text import code_query_words as query_words

    grep_times = []
    for text in queries:
        argv = ["git", "grep", "-I", "-i", "-c", "-F"]
        for w in query_words(text) or [text]:
            argv += ["-e", w]
        t = time.perf_counter()
        subprocess.run(argv, cwd=repo, capture_output=True)
        grep_times.append(time.perf_counter() - t)
    results["git_grep"] = stats_ms(grep_times)
    print(f"git grep: {results['git_grep']}", flush=True)
    results["peak_rss_mb"] = round(max(full["tree_peak_rss_mb"], q["tree_peak_rss_mb"]), 1)
    results["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    results["verdict"] = {
        "full_build_s": results["full_build"]["seconds"] <= TARGETS["full_build_s"],
        "incremental_1_file_s": results["incremental_1"]["seconds"] <= TARGETS["incremental_1_file_s"],
        "query_p50_ms": results["queries"]["query"]["p50_ms"] <= TARGETS["query_p50_ms"],
        "peak_rss_mb": results["peak_rss_mb"] <= TARGETS["peak_rss_mb"],
    }
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
