"""The code index on a monorepo-sized work tree (issue 17): several public repositories laid out as
one git work tree, built, rebuilt with nothing changed, switched to a branch that changes 500 files,
and queried, side by side with ``git grep`` and ripgrep on the same queries.

    python bench/monorepo.py --mirrors /work/.mirror --workdir /tmp/monorepo \
        [--baseline-python /tmp/main-checkout/.venv/bin/python --rounds 2] [--json out.json]

The corpus is assembled from the HEAD of each listed mirror (``git archive``; a mirror not present is
left out and said; a mirror whose snapshot lacks some large blobs is written without them, and they
are listed), each under its own folder, committed as one repository: the same mirrors give the same
tree. Measured, each in a fresh process as a user runs it (``python -m autology_mcp --root R index
build``): the full build (with ``--baseline-python``, also another checkout's, alternating with ours
from an empty cache each time: ours, baseline, baseline, ours), a no-op build, the build after ``git
checkout`` of a branch that changed 500 files (the index is per branch and work tree, so that
branch's first build), the index size on disk, the peak RSS (summed over the builder and every
process under it, sampled from /proc) and CPU seconds of each build, and the query time for 20
queries, in process (``autology_mcp.code.service.code_search``) and over MCP stdio
(``autology_code_search``, which brings the index up to date first, when its file watch saw a
change), against ``git grep`` and ripgrep (when installed). Over stdio, a file written a moment
before a search must be found, and gone once deleted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

MIRRORS = [
    "sympy+sympy", "ansible+ansible", "BrighterCommand+Brighter", "python+mypy", "pytest-dev+pytest", "pypa+pip",
    "python+peps", "basicmachines-co+basic-memory", "psf+black", "pallets+click", "psf+requests", "encode+httpx",
    "numpy+numpy", "scipy+scipy", "boto+botocore", "sphinx-doc+sphinx", "python+typeshed",
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


def write_tree(repo: Path, dest: Path) -> list[str]:
    """Write HEAD's files of ``repo`` under ``dest`` as ``git archive`` would, leaving out the blobs the
    mirror does not hold (a snapshot may omit its largest files); returns the paths left out."""
    listing = run(["git", "--git-dir", str(repo), "ls-tree", "-r", "-z", "HEAD"]).split("\0")
    entries = []
    for item in listing:
        if not item:
            continue
        meta, path = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((mode, sha, path))
    batch = subprocess.run(["git", "--git-dir", str(repo), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for _, sha, _ in entries).encode(), capture_output=True,
                           check=True).stdout
    absent, pos = [], 0
    for mode, sha, path in entries:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing":
            absent.append(path)
            continue
        size = int(header[2])
        data, pos = batch[pos:pos + size], pos + size + 1
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode(), target)
            continue
        target.write_bytes(data)
        if mode == "100755":
            target.chmod(0o755)
    return absent


def assemble(mirrors: Path, work: Path) -> dict:
    """The work tree, built once; returns what it holds."""
    used, missing, absent = [], [], []
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
            archive = subprocess.run(["git", "-C", str(repo), "archive", "HEAD"], capture_output=True)
            if archive.returncode == 0:
                subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
            else:  # a mirror whose largest blobs were left out of its snapshot
                absent.extend(f"{dest.name}/{p}" for p in write_tree(repo, dest))
            used.append(name)
        env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
               "GIT_COMMITTER_EMAIL": "b@x", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
               "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
        # the repositories' own .gitattributes (eol conversion, working-tree encodings) must not rewrite
        # their files on the way in: the corpus is committed byte for byte
        (work / ".git" / "info").mkdir(exist_ok=True)
        (work / ".git" / "info" / "attributes").write_text("* -text -eol -working-tree-encoding -filter -ident\n")
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
    return {"mirrors_used": used or "(assembled earlier)", "mirrors_missing": missing, "blobs_absent": absent,
            "files": len(files), "bytes": size}


class TreeSampler:
    """Samples a process and all its descendants from /proc every 50 ms: the peak of their summed
    resident sizes (worker processes included, which getrusage misses: they are the fork server's
    children, not ours) and the CPU seconds each used (as last sampled)."""

    def __init__(self, pid: int):
        self.pid, self.peak_rss, self.cpu = pid, 0, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[tuple[int, list[str]]]:
        stats, children = {}, {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    text = f.read()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()
            stats[int(name)] = fields
            children.setdefault(int(fields[1]), []).append(int(name))
        out, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            if pid in stats:
                out.append((pid, stats[pid]))
            todo.extend(children.get(pid, []))
        return out

    def _run(self) -> None:
        page, tick = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK")
        while not self._stop.is_set():
            tree = self._tree()
            for pid, f in tree:
                self.cpu[pid] = (int(f[11]) + int(f[12])) / tick
            self.peak_rss = max(self.peak_rss, sum(int(f[21]) * page for _, f in tree))
            self._stop.wait(0.05)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {"peak_rss_mb": round(self.peak_rss / 1e6, 1), "cpu_s": round(sum(self.cpu.values()), 1),
                "processes": len(self.cpu)}


def timed_build(work: Path, python: str = sys.executable, *extra: str) -> dict:
    """``autology index build`` in its own process (``python``: whose code): wall seconds, and the
    peak RSS and CPU seconds of the builder and every process under it."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([python, "-m", "autology_mcp", "--root", str(work), "index", "build", "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work.parent)
    sampler = TreeSampler(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    sampled = sampler.stop()
    if proc.returncode:
        raise SystemExit(f"build failed: {err.decode()[-2000:]}")
    summary = json.loads(out)
    return {"wall_s": round(wall, 2), **sampled,
            "summary": {k: summary.get(k) for k in ("files_scanned", "files", "files_skipped", "rebuilt", "reused",
                                                     "added", "deleted", "chunks") if k in summary}}


def side_by_side(work: Path, baseline: str, rounds: int) -> dict:
    """Full builds of the baseline's code and ours, alternating (ours, baseline, baseline, ours, ...),
    each from an empty cache: the same machine, the same load, the same files."""
    runs: dict[str, list[dict]] = {"baseline": [], "ours": []}
    order = [("ours", sys.executable), ("baseline", baseline)]
    for r in range(rounds):
        for name, python in (order if r % 2 == 0 else order[::-1]):
            shutil.rmtree(work / ".autology", ignore_errors=True)
            runs[name].append(timed_build(work, python))
            print(f"  full build, {name}: {runs[name][-1]}", flush=True)
    walls = {k: [r["wall_s"] for r in v] for k, v in runs.items()}
    return {"runs": runs, "wall_s": walls,
            "ratio_of_medians": round(statistics.median(walls["ours"]) / statistics.median(walls["baseline"]), 3)}


def grep_ms(cmd: list[str], work: Path, words: list[str]) -> float:
    """Wall ms of one grep-like command for any of ``words`` (case-insensitive, first match per file)."""
    for w in words:
        cmd = cmd + ["-e", w]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=work, capture_output=True)
    return (time.perf_counter() - t0) * 1000


async def stdio_queries(work: Path) -> dict:
    """``autology_code_search`` over MCP stdio, as users get it (the server brings the index up to
    date before a search: with its file watch, only after a change). Then a file is written and
    searched for at once (staged with ``git add -N``: the index covers tracked files), and deleted and
    searched for at once: it must be found, then gone."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "autology_mcp", "--root", str(work), "serve"],
                                   env={"PYTHONUNBUFFERED": "1"}, cwd=str(work.parent))
    times, modes = [], []
    fresh_file = work / "zz_bench_fresh.py"
    async with Client(params) as client:

        async def call(q: str) -> tuple[float, dict]:
            t0 = time.perf_counter()
            result = await client.call_tool("autology_code_search", {"query": q, "top": 10})
            ms = (time.perf_counter() - t0) * 1000
            if result.is_error:
                raise SystemExit(f"autology_code_search failed: {result.content}")
            return ms, result.structured_content

        for q in QUERIES[:3]:
            await call(q)
        for q in QUERIES:
            ms, data = await call(q)
            times.append(ms)
            modes.append(data["trace"].get("refresh", {}).get("mode"))
        try:
            fresh_file.write_text("def quokka_marmalade_dispatch():\n    return 'fresh'\n")
            run(["git", "add", "-N", fresh_file.name], cwd=work)  # the index covers tracked files
            write_ms, data = await call("quokka marmalade dispatch")
            found = bool(data["hits"]) and data["hits"][0]["path"] == fresh_file.name
        finally:
            fresh_file.unlink(missing_ok=True)
            run(["git", "rm", "-q", "--cached", "--ignore-unmatch", fresh_file.name], cwd=work)
        delete_ms, data = await call("quokka marmalade dispatch")
        gone = all(h["path"] != fresh_file.name for h in data["hits"])
        after_ms, _ = await call(QUERIES[0])
    return {"ms": times, "refresh_modes": sorted(set(m for m in modes if m)),
            "new_file": {"found": found, "ms": round(write_ms, 1)},
            "deleted_file": {"gone": gone, "ms": round(delete_ms, 1)}, "next_search_ms": round(after_ms, 1)}


def index_bytes(work: Path) -> int:
    base = work / ".autology" / "cache" / "index"
    return sum(p.stat().st_size for p in base.rglob("*") if p.is_file())


def pct(xs: list[float], q: float) -> float | None:
    """The q-quantile (nearest rank) of xs, rounded."""
    if not xs:
        return None
    ordered = sorted(xs)
    return round(ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))], 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/autology-monorepo"))
    ap.add_argument("--baseline-python", help="the interpreter of another checkout (e.g. main's .venv/bin/python): "
                    "its full build is timed beside ours, alternating")
    ap.add_argument("--rounds", type=int, default=2, help="full builds of each side with --baseline-python")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = args.workdir.resolve()
    report: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                    "uptime_start": run(["uptime"]).strip()}
    report["corpus"] = assemble(args.mirrors, work)
    c = report["corpus"]
    print(f"# {report['machine']}; {report['uptime_start']}")
    print(f"corpus: {c['files']} files, {c['bytes'] / 1e6:.0f} MB ({c['mirrors_used']}; missing {c['mirrors_missing']};"
          f" blobs absent from the mirrors {c['blobs_absent']})", flush=True)
    last = None
    if args.baseline_python:
        report["side_by_side"] = side_by_side(work, args.baseline_python, args.rounds)
        sbs = report["side_by_side"]
        print(f"full builds side by side (s): baseline {sbs['wall_s']['baseline']}, ours {sbs['wall_s']['ours']};"
              f" ours / baseline (medians) {sbs['ratio_of_medians']}", flush=True)
        last = "baseline" if args.rounds % 2 else "ours"  # the order alternates: ours, baseline, baseline, ours, ...
        report["full_build"] = sbs["runs"]["ours"][-1]
    if last != "ours":
        shutil.rmtree(work / ".autology", ignore_errors=True)
        report["full_build"] = timed_build(work)
        print(f"full build: {report['full_build']}", flush=True)
    report["noop_build"] = timed_build(work)
    print(f"no-op build: {report['noop_build']}", flush=True)
    report["index_mb"] = round(index_bytes(work) / 1e6, 1)
    print(f"index on disk: {report['index_mb']} MB", flush=True)

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

    stdio = asyncio.run(stdio_queries(work))
    report["query_ms"] = {"ours_p50": pct(ours, 0.5), "ours_p95": pct(ours, 0.95),
                          "ours_stdio_p50": pct(stdio["ms"], 0.5), "ours_stdio_p95": pct(stdio["ms"], 0.95),
                          "git_grep_p50": pct(grep, 0.5), "ripgrep_p50": pct(rg, 0.5), "ripgrep_p95": pct(rg, 0.95)}
    report["stdio"] = {k: v for k, v in stdio.items() if k != "ms"}
    q = report["query_ms"]
    print(f"queries, top 10, p50 / p95: in process {q['ours_p50']} / {q['ours_p95']} ms, over MCP stdio"
          f" {q['ours_stdio_p50']} / {q['ours_stdio_p95']} ms (refresh: {stdio['refresh_modes']}); git grep"
          f" {q['git_grep_p50']} ms, ripgrep {q['ripgrep_p50']} / {q['ripgrep_p95']} ms (any word, first hit per file)")
    print(f"over stdio, a file written a moment before the search: {stdio['new_file']}; deleted: {stdio['deleted_file']};"
          f" the search after: {stdio['next_search_ms']} ms", flush=True)
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
