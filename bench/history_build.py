"""The history index's build and upkeep on a long real history (issue 41).

    python bench/history_build.py /work/.mirror/sympy+sympy/repo --workdir /tmp/history-build [--json out.json]

A work tree of the repository (cloned once into ``--workdir``), ``autology init``, then:

- **first build**: ``HistoryIndex.sync()`` from nothing (the newest 50,000 commits HEAD reaches), and
  the database's size;
- **after a commit**: a commit made in the work tree, then the post-commit hook as Claude Code runs it
  (``python -m autology_mcp.hooks post-commit`` with a Bash ``git commit`` payload), timed as a whole
  process; the new commit must be the index's head when it returns;
- **search**: p50 and p95 of ``HistoryIndex.search`` in process over a few questions, and of a
  ``sync`` that finds nothing to do (what every search pays first).

``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUESTIONS = ["why was the cache removed from the polynomial module", "printing of matrices in latex",
             "deprecate the old assumptions", "integrate rational functions faster", "fix the solveset for trig"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True, text=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from autology_mcp.history.index import HistoryIndex
    from autology_mcp.knowledge.service import Autology

    up = [subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()]
    work = args.workdir / "repo"
    if not (work / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(args.repo), str(work)], check=True)
    Autology.open(work).close()
    index = HistoryIndex(work)
    for suffix in ("", "-wal", "-shm"):
        Path(str(index.path) + suffix).unlink(missing_ok=True)
    index = HistoryIndex(work)
    reachable = int(git(work, "rev-list", "--count", "HEAD"))
    t = time.perf_counter()
    built = index.sync()
    build_s = time.perf_counter() - t
    size = sum(Path(str(index.path) + s).stat().st_size for s in ("", "-wal") if Path(str(index.path) + s).exists())

    syncs, searches = [], []
    for _ in range(5):
        for q in QUESTIONS:
            t = time.perf_counter()
            index.sync()
            syncs.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            index.search(q, 10)
            searches.append((time.perf_counter() - t) * 1000)
    index.close()

    (work / "bench_history_note.txt").write_text(f"a change at {time.time()}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "add", "-A"], cwd=work, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "Explain the bench note"], cwd=work, check=True, env=env)
    sha = git(work, "rev-parse", "HEAD").strip()
    payload = {"session_id": "bench", "cwd": str(work), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "git commit -qm 'Explain the bench note'"}, "tool_response": {"stdout": ""}}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autology_mcp.hooks", "post-commit"], input=json.dumps(payload), text=True,
                   capture_output=True, cwd=work, env={**env, "AUTOLOGY_ROOT": str(work)})
    hook_s = time.perf_counter() - t
    index = HistoryIndex(work)
    in_index = index.head() == sha and index.search("Explain the bench note", 1)[0].sha == sha
    index.close()
    git(work, "reset", "-q", "--hard", "HEAD~1")
    up.append(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())

    out = {
        "repo": str(args.repo), "head": git(work, "rev-parse", "--short", "HEAD").strip(),
        "reachable_commits": reachable, "indexed": built.commits, "mode": built.mode,
        "first_build_s": round(build_s, 2), "db_mb": round(size / 1e6, 1),
        "sync_unchanged_ms_p50": round(statistics.median(syncs), 2),
        "search_ms_p50": round(statistics.median(searches), 2),
        "search_ms_p95": round(sorted(searches)[int(0.95 * len(searches)) - 1], 2),
        "post_commit_hook_s": round(hook_s, 3), "new_commit_in_index_after_hook": in_index,
        "uptime": up,
    }
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
