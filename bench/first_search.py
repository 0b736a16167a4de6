"""The first search after an upgrade and on a new branch (issue 17: searches must not stall on indexing).

Four cases, each measured over real MCP stdio (``python -m autology_mcp --root R serve``, as a user
runs it) and as a CLI run (``autology search``), on a clone of a real repository:

- **fresh clone**: no code index for any branch. The server builds one in the background when it
  starts (``[index] auto_build``) and answers from the knowledge meanwhile (code channels
  ``building``); the CLI does not build it (``no_index``, with how to build).
- **upgrade**: the index's manifest is made to look built by an older engine (its version set to
  0), so the next build starts from scratch. The server answers the first ``autology_search`` at
  once from the previous build and rebuilds in the background; the CLI rebuilds inline.
- **new branch**: ``git checkout -b`` and ``--changed`` files edited and committed. The server reads
  the other branch's index meanwhile and builds the branch's own from it in the background; the CLI
  builds it inline.
- **many changed files**: ``--changed`` files edited in the work tree of an indexed branch (as after
  a ``git pull``). Over 200 (``channels.DEFER_OVER``) the server indexes them in the background and
  answers from the index as it is, with hits in them marked stale; the CLI indexes them inline.

For the server it prints the first answer's latency, its freshness state, how long until a search
reads a finished index (polling every 0.25 s) and the latency of the searches meanwhile; for the
CLI, the wall time of the run.

    git clone -q /work/.mirror/sympy+sympy/repo /tmp/first-search/sympy   # or github.com/sympy/sympy
    python bench/first_search.py /tmp/first-search/sympy --changed 300

The clone is modified (a branch is created, files edited, the index rebuilt); use a throwaway clone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

QUERY = "parse a string into an expression"
WAITING = ("rebuilding", "building", "updating")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def autology(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(root), *args],
                          capture_output=True, text=True, check=True)


def manifest_path(root: Path) -> Path:
    status = json.loads(autology(root, "index", "status", "--json").stdout)
    return Path(status["index_dir"]) / "manifest.json"


def age_index(root: Path) -> None:
    path = manifest_path(root)
    manifest = json.loads(path.read_text())
    manifest["engine"]["version"] = 0
    path.write_text(json.dumps(manifest))


def edit(root: Path, changed: int, skip: int = 0) -> list[str]:
    """Append a comment to ``changed`` Python files (after the first ``skip``)."""
    files = [p for p in git(root, "ls-files", "*.py").split("\n") if p][skip : skip + changed]
    for p in files:
        with open(root / p, "a", encoding="utf-8") as f:
            f.write("\n# edited on the branch\n")
    return files


def new_branch(root: Path, name: str, changed: int, skip: int = 0) -> None:
    """A new branch from HEAD with ``changed`` Python files edited (after the first ``skip``)."""
    git(root, "checkout", "-q", "-B", name, "HEAD")
    files = edit(root, changed, skip)
    git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qam", f"edit {len(files)} files")


async def server_case(root: Path) -> dict:
    params = StdioServerParameters(command=sys.executable, args=["-m", "autology_mcp", "--root", str(root), "serve"])
    async with Client(params) as client:
        t0 = time.perf_counter()
        first = await client.call_tool("autology_search", {"query": QUERY, "scope": ["code"], "limit": 5})
        first_ms = (time.perf_counter() - t0) * 1000
        fresh = first.structured_content["trace"]["freshness"]["code_index"]
        hits = len(first.structured_content["hits"])
        stale = sum(1 for h in first.structured_content["hits"] if h.get("stale"))
        state, exists = fresh.get("checked"), fresh.get("exists")
        meanwhile = []
        # a fresh clone's first search may come before the server's start-up thread began the build
        while (state in WAITING or not exists) and time.perf_counter() - t0 < 600:
            await asyncio.sleep(0.25)
            t = time.perf_counter()
            answer = await client.call_tool("autology_search", {"query": QUERY, "scope": ["code"], "limit": 5})
            meanwhile.append((time.perf_counter() - t) * 1000)
            code_index = answer.structured_content["trace"]["freshness"]["code_index"]
            state, exists = code_index.get("checked"), code_index.get("exists")
        meanwhile.sort()
        return {"first_ms": round(first_ms, 1), "first_state": fresh.get("checked"), "first_hits": hits, "first_stale": stale,
                "read_from": fresh.get("read_from"), "ready_s": round(time.perf_counter() - t0, 2),
                "meanwhile": {"searches": len(meanwhile), "p50_ms": round(meanwhile[len(meanwhile) // 2], 1),
                              "max_ms": round(meanwhile[-1], 1)} if meanwhile else None}


def cli_case(root: Path) -> dict:
    t0 = time.perf_counter()
    run = autology(root, "search", QUERY, "--scope", "code", "--limit", "5", "--json")
    answer = json.loads(run.stdout)
    return {"wall_s": round(time.perf_counter() - t0, 2), "state": answer["trace"]["freshness"]["code_index"].get("checked"),
            "hits": len(answer["hits"]), "stderr": run.stderr.strip()[:160]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a throwaway clone of a git repository (it is modified)")
    ap.add_argument("--changed", type=int, default=300, help="files edited on the new branch (default 300)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    root = args.root.resolve()
    base = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    autology(root, "init")
    out: dict = {"uptime_start": uptime(), "root": str(root)}
    print(f"# {out['uptime_start']}")

    shutil.rmtree(root / ".autology" / "cache" / "index", ignore_errors=True)  # no index for any branch
    out["fresh_cli"] = cli_case(root)
    print("fresh clone, CLI:   ", out["fresh_cli"])
    out["fresh_server"] = asyncio.run(server_case(root))
    print("fresh clone, server:", out["fresh_server"])
    autology(root, "index", "build")

    age_index(root)
    out["upgrade_server"] = asyncio.run(server_case(root))
    print("upgrade, server:", out["upgrade_server"])
    age_index(root)
    out["upgrade_cli"] = cli_case(root)
    print("upgrade, CLI:   ", out["upgrade_cli"])

    new_branch(root, "bench-first-search-a", args.changed)
    out["branch_server"] = asyncio.run(server_case(root))
    print("new branch, server:", out["branch_server"])
    git(root, "checkout", "-q", base)
    new_branch(root, "bench-first-search-b", args.changed, skip=args.changed)  # other files than branch a's
    out["branch_cli"] = cli_case(root)
    print("new branch, CLI:   ", out["branch_cli"])
    git(root, "checkout", "-q", base)

    autology(root, "index", "build")
    edit(root, args.changed, skip=2 * args.changed)
    out["changed_server"] = asyncio.run(server_case(root))
    print("many changed files, server:", out["changed_server"])
    git(root, "checkout", "-q", "--", ".")
    edit(root, args.changed, skip=3 * args.changed)
    out["changed_cli"] = cli_case(root)
    print("many changed files, CLI:   ", out["changed_cli"])
    git(root, "checkout", "-q", "--", ".")

    out["uptime_end"] = uptime()
    print(f"# {out['uptime_end']}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
