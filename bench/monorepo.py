"""The code index on a monorepo-sized work tree (issue 17): several public repositories laid out as
one git work tree, built, rebuilt with nothing changed, switched to a branch that changes 500 files,
and queried, side by side with ``git grep`` on the same queries.

    python bench/monorepo.py --mirrors /work/.mirror --workdir /tmp/monorepo [--json out.json]

The corpus is assembled from the HEAD of each listed mirror (``git archive``; a mirror not present is
left out and said), each under its own folder, committed as one repository: the same mirrors give
the same tree. Measured, each in a fresh process as a user runs it (``python -m autology_mcp --root R
index build``): the full build, a no-op build, the build after ``git checkout`` of a branch that
changed 500 files (the index is per branch and work tree, so that branch's first build), the index
size on disk, the peak RSS of the builder and its worker processes, and the
query time for 20 queries, in process (``autology_mcp.code.service.code_search``) and over MCP stdio
(``autology_code_search``, which re-checks the index first), against ``git grep`` and ripgrep (when installed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

MIRRORS = [
    "sympy+sympy", "ansible+ansible", "BrighterCommand+Brighter", "python+mypy", "pytest-dev+pytest", "pypa+pip",
    "python+peps", "basicmachines-co+basic-memory", "psf+black", "pallets+click", "psf+requests", "encode+httpx",
]
QUERIES = [
    "parse configuration file", "retry with exponential backoff", "timeout", "cache invalidation",
    "command line arguments", "unicode normalization", "thread pool executor", "http redirect",
    "plugin hook registration", "type checker inference", "symbolic integration", "inventory plugin",
    "message broker outbox", "virtual environment", "dependency resolver", "ssl certificate verification",
    "markdown frontmatter", "matrix determinant", "fixture scope", "deprecation warning",
]


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> str:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def assemble(mirrors: Path, work: Path) -> dict:
    """The work tree, built once; returns what it holds."""
    used, missing = [], []
    if not (work / ".git").exists():
        work.mkdir(parents=True, exist_ok=True)
        run(["git", "init", "-q", "-b", "main"], cwd=work)
        for name in MIRRORS:
            repo = mirrors / name / "repo"
            if not repo.exists():
                missing.append(name)
                continue
            dest = work / name.split("+")[1]
            dest.mkdir(exist_ok=True)
            archive = subprocess.run(["git", "-C", str(repo), "archive", "HEAD"], capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
            used.append(name)
        env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
               "GIT_COMMITTER_EMAIL": "b@x", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
               "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
        run(["git", "add", "-A"], cwd=work)
        run(["git", "commit", "-q", "-m", "corpus"], cwd=work, env=env)
        # the branch that changes 500 files: a comment line appended to the first 500 Python files
        run(["git", "checkout", "-q", "-b", "switch"], cwd=work)
        py = [p for p in run(["git", "ls-files", "*.py"], cwd=work).split("\n") if p][:500]
        for p in py:
            with open(work / p, "a", encoding="utf-8") as f:
                f.write("\n# changed on the switch branch\n")
        run(["git", "commit", "-q", "-am", "500 files changed"], cwd=work, env=env)
        run(["git", "checkout", "-q", "main"], cwd=work)
    files = [p for p in run(["git", "ls-files"], cwd=work).split("\n") if p]
    size = sum((work / p).stat().st_size for p in files if (work / p).is_file() and not (work / p).is_symlink())
    return {"mirrors_used": used or "(assembled earlier)", "mirrors_missing": missing, "files": len(files),
            "bytes": size}


def timed_build(work: Path, *extra: str) -> dict:
    """``autology index build`` in its own process: wall seconds and the process's peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "autology_mcp", "--root", str(work), "index", "build", "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work.parent)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"build failed: {err.decode()[-2000:]}")
    summary = json.loads(out)
    # the largest resident size of any process this bench has waited for so far (the builder, and
    # its worker processes, which the builder waits for): a peak, not this build's alone
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"wall_s": round(wall, 2), "peak_rss_mb_so_far": round(rss, 1),
            "summary": {k: summary.get(k) for k in ("files", "rebuilt", "reused", "added", "deleted", "chunks") if k in summary}}


def grep_ms(cmd: list[str], work: Path, words: list[str]) -> float:
    """Wall ms of one grep-like command for any of ``words`` (case-insensitive, first match per file)."""
    for w in words:
        cmd = cmd + ["-e", w]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=work, capture_output=True)
    return (time.perf_counter() - t0) * 1000


async def stdio_query_ms(work: Path) -> list[float]:
    """``autology_code_search`` over MCP stdio (the server re-checks the index before each call, as users get it)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "autology_mcp", "--root", str(work), "serve"],
                                   env={"PYTHONUNBUFFERED": "1"}, cwd=str(work.parent))
    out = []
    async with Client(params) as client:
        for q in QUERIES[:3]:
            await client.call_tool("autology_code_search", {"query": q, "top": 10})
        for q in QUERIES:
            t0 = time.perf_counter()
            result = await client.call_tool("autology_code_search", {"query": q, "top": 10})
            out.append((time.perf_counter() - t0) * 1000)
            if result.is_error:
                raise SystemExit(f"autology_code_search failed: {result.content}")
    return out


def index_bytes(work: Path) -> int:
    base = work / ".autology" / "cache" / "index"
    return sum(p.stat().st_size for p in base.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/autology-monorepo"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = args.workdir.resolve()
    report: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                    "uptime_start": run(["uptime"]).strip()}
    report["corpus"] = assemble(args.mirrors, work)
    c = report["corpus"]
    print(f"# {report['machine']}; {report['uptime_start']}")
    print(f"corpus: {c['files']} files, {c['bytes'] / 1e6:.0f} MB ({c['mirrors_used']}; missing {c['mirrors_missing']})")
    shutil.rmtree(work / ".autology", ignore_errors=True)
    report["full_build"] = timed_build(work)
    print(f"full build: {report['full_build']}")
    report["noop_build"] = timed_build(work)
    print(f"no-op build: {report['noop_build']}")
    report["index_mb"] = round(index_bytes(work) / 1e6, 1)
    print(f"index on disk: {report['index_mb']} MB")

    from autology_mcp.code import service

    ours, grep, rg = [], [], []
    for q in QUERIES:
        service.code_search(work, q, top=10, refresh=False)  # warm
        t0 = time.perf_counter()
        service.code_search(work, q, top=10, refresh=False)
        ours.append((time.perf_counter() - t0) * 1000)
        words = [w for w in q.split() if len(w) > 2]
        grep.append(grep_ms(["git", "grep", "-n", "-i", "-I", "--max-count", "1"], work, words))
        if shutil.which("rg"):
            rg.append(grep_ms(["rg", "-n", "-i", "--max-count", "1"], work, words))
    import asyncio

    over_stdio = asyncio.run(stdio_query_ms(work))
    p50 = lambda xs: round(statistics.median(xs), 1) if xs else None  # noqa: E731
    report["query_ms"] = {"ours_p50": p50(ours), "ours_p95": round(sorted(ours)[int(0.95 * len(ours)) - 1], 1),
                          "ours_stdio_p50": p50(over_stdio), "git_grep_p50": p50(grep), "ripgrep_p50": p50(rg)}
    print(f"queries, top 10, p50: in process {report['query_ms']['ours_p50']} ms (p95 {report['query_ms']['ours_p95']}),"
          f" over MCP stdio {report['query_ms']['ours_stdio_p50']} ms; git grep {report['query_ms']['git_grep_p50']} ms,"
          f" ripgrep {report['query_ms']['ripgrep_p50']} ms (any word, first hit per file)")
    run(["git", "checkout", "-q", "switch"], cwd=work)
    try:
        report["branch_switch_build"] = timed_build(work)
    finally:
        run(["git", "checkout", "-q", "main"], cwd=work)
    print(f"after switching to a branch that changed 500 files: {report['branch_switch_build']}")
    report["uptime_end"] = run(["uptime"]).strip()
    print(report["uptime_end"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
