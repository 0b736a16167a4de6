"""Peers side by side (issue 7): the official MCP memory server and autology, same workload, same client.

The peer is the reference knowledge-graph memory server, npm ``@modelcontextprotocol/server-memory``
(one JSONL file; ``create_entities``, ``search_nodes``, ...). It is installed at bench time into
bench/.data/npm with ``npm install --prefix`` (the bench may download; the product never does) and run
with ``node``. Both servers are driven through the same MCP Python SDK ``Client`` over stdio.

The workload, mapped fairly:

- **create N items**, one tool call each (as an agent records what it learns): theirs
  ``create_entities`` with one entity ``{name: title, entityType: type, observations: [content]}``;
  ours ``autology_capture {title, content, type, tags}``. Same titles, types and contents
  (bench/store_corpus.py, seeded), titles made unique (their entity name is the key).
- **M searches**: one vocabulary word each (their search is a case-insensitive substring match over
  names, types and observations, so multi-word queries would mostly find nothing there); theirs
  ``search_nodes {query}``, which returns every match; ours ``autology_query {query}`` (ranked, top 10).
  Hits and response sizes are printed beside the times.
- **cold start**: spawn the server on the N-item store, handshake, first search answered (ours with
  its cache warm).
- **two processes writing at once** (their issue #4797): two server processes on one store, each
  creating K items concurrently; lost = acknowledged items missing from the store afterwards.
- **a corrupted store** (their issue #1481): a truncated line appended to their JSONL file, a broken
  node file written into ours; then a search and a create on each.

Run:  python bench/peers.py [--sizes 1000 10000] [--searches 200] [--concurrent 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from store_corpus import CONCERNS, QUALIFIERS, SUBJECTS, TECH, CorpusGenerator  # noqa: E402

PACKAGE = "@modelcontextprotocol/server-memory"
NPM_DIR = HERE / ".data" / "npm"


# ------------------------------------------------------------------------------ the two servers


def install_peer(version: str | None) -> tuple[Path, str]:
    """Install the official memory server into bench/.data/npm (once); return its entry point and version."""
    package_dir = NPM_DIR / "node_modules" / "@modelcontextprotocol" / "server-memory"
    wanted = f"{PACKAGE}@{version}" if version else PACKAGE
    if not (package_dir / "package.json").exists() or (
        version and json.loads((package_dir / "package.json").read_text())["version"] != version
    ):
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(NPM_DIR), wanted], check=True, stdout=subprocess.DEVNULL)
    meta = json.loads((package_dir / "package.json").read_text())
    return package_dir / "dist" / "index.js", meta["version"]


class Peer:
    name = "official server-memory"

    def __init__(self, entry: Path, store: Path):
        self.entry, self.file = entry, store / "memory.jsonl"
        store.mkdir(parents=True, exist_ok=True)

    def params(self) -> StdioServerParameters:
        return StdioServerParameters(command="node", args=[str(self.entry)], env={**os.environ, "MEMORY_FILE_PATH": str(self.file)})

    @staticmethod
    def create(item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        entity = {"name": item["title"], "entityType": item["type"], "observations": [item["content"]]}
        return "create_entities", {"entities": [entity]}

    @staticmethod
    def search(query: str) -> tuple[str, dict[str, Any]]:
        return "search_nodes", {"query": query}

    @staticmethod
    def hits(result: Any) -> int:
        return len((result.structured_content or {}).get("entities", []))

    def stored_names(self) -> list[str]:
        if not self.file.exists():
            return []
        names = []
        for line in self.file.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if item.get("type") == "entity":
                names.append(item["name"])
        return names

    def corrupt(self) -> None:
        with open(self.file, "a", encoding="utf-8") as handle:
            handle.write('\n{"type":"entity","name":"half a line')


class Ours:
    name = "autology"

    def __init__(self, store: Path):
        self.root = store
        store.mkdir(parents=True, exist_ok=True)

    def params(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable, args=["-m", "autology_mcp", "--root", str(self.root), "serve"], env=dict(os.environ)
        )

    @staticmethod
    def create(item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "autology_capture", {"title": item["title"], "content": item["content"], "type": item["type"], "tags": item["tags"]}

    @staticmethod
    def search(query: str) -> tuple[str, dict[str, Any]]:
        return "autology_query", {"query": query}

    @staticmethod
    def hits(result: Any) -> int:
        return len((result.structured_content or {}).get("result", []))

    def stored_names(self) -> list[str]:
        from autology_mcp.knowledge.markdown import parse_node

        names = []
        for path in (self.root / ".autology" / "nodes").rglob("*.md"):
            try:
                names.append(parse_node(path.read_text(encoding="utf-8")).title)
            except Exception:  # noqa: BLE001
                continue
        return names

    def corrupt(self) -> None:
        bad = self.root / ".autology" / "nodes" / "concepts" / "broken.md"
        bad.write_text('---\nid: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f\ntitle: "half a line\n', encoding="utf-8")


# ------------------------------------------------------------------------------ workload


def items(count: int, seed: int, prefix: str = "") -> list[dict[str, Any]]:
    gen = CorpusGenerator(seed)
    made = []
    for i in range(count):
        node_type = gen.node_type()
        title = f"{gen.title(node_type)[:88]} #{prefix}{i}"
        made.append({"title": title, "type": node_type, "content": gen.content(node_type), "tags": gen.tags()})
    return made


def queries(count: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    pools = [SUBJECTS, QUALIFIERS, TECH, CONCERNS]
    return [rng.choice(rng.choice(pools)).replace("-", " ") for _ in range(count)]


def summary(samples_s: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples_s)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[max(0, math.ceil(0.95 * len(ms)) - 1)], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "total_s": round(sum(samples_s), 2),
    }


async def timed(client: Client, name: str, arguments: dict[str, Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = await client.call_tool(name, arguments)
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content[0].text[:300]}")
    return elapsed, result


async def create_and_search(server: Any, workload: list[dict[str, Any]], searches: list[str]) -> dict[str, Any]:
    create_s, search_s, hits, sizes = [], [], [], []
    async with Client(server.params()) as client:
        for item in workload:
            elapsed, _ = await timed(client, *server.create(item))
            create_s.append(elapsed)
        for query in searches:
            elapsed, result = await timed(client, *server.search(query))
            search_s.append(elapsed)
            hits.append(server.hits(result))
            sizes.append(sum(len(getattr(b, "text", "")) for b in result.content))
    stored = len(server.stored_names())
    return {
        "create": summary(create_s),
        "create_first_100_p50_ms": round(statistics.median(create_s[:100]) * 1000, 2),
        "create_last_100_p50_ms": round(statistics.median(create_s[-100:]) * 1000, 2),
        "search": summary(search_s),
        "search_hits_mean": round(statistics.fmean(hits), 1),
        "search_response_kb_mean": round(statistics.fmean(sizes) / 1024, 1),
        "stored_after_create": stored,
    }


async def cold_start(server: Any, query: str, runs: int) -> dict[str, Any]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        async with Client(server.params()) as client:
            await timed(client, *server.search(query))
            times.append(time.perf_counter() - start)
    return {"median_s": round(statistics.median(times), 3), "runs_s": [round(t, 3) for t in times]}


async def concurrent_writers(server_a: Any, server_b: Any, count: int, seed: int) -> dict[str, Any]:
    """Two server processes on one store, each creating ``count`` items at the same time."""
    acknowledged: list[str] = []
    errors: list[str] = []

    async def writer(server: Any, prefix: str) -> None:
        async with Client(server.params()) as client:
            for item in items(count, seed, prefix):
                name, arguments = server.create(item)
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    errors.append(result.content[0].text[:200])
                else:
                    acknowledged.append(item["title"])

    await asyncio.gather(writer(server_a, "A"), writer(server_b, "B"))
    stored = set(server_a.stored_names())
    lost = [t for t in acknowledged if t not in stored]
    return {"attempted": 2 * count, "acknowledged": len(acknowledged), "errors": len(errors), "stored": len(stored), "lost": len(lost)}


async def corrupted(server: Any, seed: int) -> dict[str, Any]:
    async with Client(server.params()) as client:
        for item in items(5, seed, "C"):
            await timed(client, *server.create(item))
    server.corrupt()
    outcome = {}
    async with Client(server.params()) as client:
        for label, (name, arguments) in (
            ("search", server.search("cache")),
            ("create", server.create(items(1, seed + 1, "D")[0])),
        ):
            result = await client.call_tool(name, arguments)
            text = result.content[0].text if result.content else ""
            outcome[label] = "error: " + text[:120].replace("\n", " ") if result.is_error else f"ok ({server.hits(result)} hits)" if label == "search" else "ok"
    return outcome


# ------------------------------------------------------------------------------ main


def ratio(theirs: float, ours: float) -> float:
    return round(theirs / ours, 2) if ours else float("nan")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    entry, version = install_peer(args.peer_version)
    out: dict[str, Any] = {
        "peer": f"{PACKAGE}@{version}",
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "sizes": {},
    }
    searches = queries(args.searches, args.seed + 7)
    with tempfile.TemporaryDirectory(prefix="autology-peers-") as tmp:
        base = Path(tmp)
        for size in args.sizes:
            workload = items(size, args.seed)
            result: dict[str, Any] = {}
            for key, server in (("theirs", Peer(entry, base / f"peer-{size}")), ("ours", Ours(base / f"ours-{size}"))):
                print(f"[{size}] {server.name}: create {size}, {len(searches)} searches", file=sys.stderr)
                result[key] = await create_and_search(server, workload, searches)
                result[key]["cold_start"] = await cold_start(server, searches[0], args.cold_runs)
            result["ratios_theirs_over_ours"] = {
                "create_p50": ratio(result["theirs"]["create"]["p50_ms"], result["ours"]["create"]["p50_ms"]),
                "create_total": ratio(result["theirs"]["create"]["total_s"], result["ours"]["create"]["total_s"]),
                "search_p50": ratio(result["theirs"]["search"]["p50_ms"], result["ours"]["search"]["p50_ms"]),
                "cold_start": ratio(result["theirs"]["cold_start"]["median_s"], result["ours"]["cold_start"]["median_s"]),
            }
            result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
            out["sizes"][str(size)] = result
        print(f"two processes x {args.concurrent} creates", file=sys.stderr)
        a, b = Peer(entry, base / "peer-concurrent"), Peer(entry, base / "peer-concurrent")
        out["concurrent_writes"] = {"theirs": await concurrent_writers(a, b, args.concurrent, args.seed)}
        a, b = Ours(base / "ours-concurrent"), Ours(base / "ours-concurrent")
        out["concurrent_writes"]["ours"] = await concurrent_writers(a, b, args.concurrent, args.seed)
        out["corrupted_store"] = {
            "theirs": await corrupted(Peer(entry, base / "peer-corrupt"), args.seed),
            "ours": await corrupted(Ours(base / "ours-corrupt"), args.seed),
        }
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def report(out: dict[str, Any]) -> str:
    lines = [f"peer: {out['peer']} (node {out['node']}); ours: autology over python {out['python']}; {out['cpus']} CPUs",
             f"load average at start {out['load_average_at_start']}, at end {out['load_average_at_end']}", ""]
    for size, r in out["sizes"].items():
        t, o, q = r["theirs"], r["ours"], r["ratios_theirs_over_ours"]
        lines += [
            f"N = {size}                      theirs                      ours                ratio (theirs/ours)",
            f"  create p50/p95 ms       {t['create']['p50_ms']:>8} / {t['create']['p95_ms']:<10} {o['create']['p50_ms']:>8} / {o['create']['p95_ms']:<10} {q['create_p50']}",
            f"  create total s          {t['create']['total_s']:>8}              {o['create']['total_s']:>8}              {q['create_total']}",
            f"  create p50 first/last100 {t['create_first_100_p50_ms']:>7} / {t['create_last_100_p50_ms']:<10} {o['create_first_100_p50_ms']:>8} / {o['create_last_100_p50_ms']}",
            f"  search p50/p95 ms       {t['search']['p50_ms']:>8} / {t['search']['p95_ms']:<10} {o['search']['p50_ms']:>8} / {o['search']['p95_ms']:<10} {q['search_p50']}",
            f"  search hits, KB/answer  {t['search_hits_mean']:>8} / {t['search_response_kb_mean']:<10} {o['search_hits_mean']:>8} / {o['search_response_kb_mean']}",
            f"  cold start s (median)   {t['cold_start']['median_s']:>8}              {o['cold_start']['median_s']:>8}              {q['cold_start']}",
            f"  stored after create     {t['stored_after_create']:>8}              {o['stored_after_create']:>8}",
            f"  load average after      {r['load_average_after']}",
            "",
        ]
    c = out["concurrent_writes"]
    lines.append("two processes creating at once: " + "; ".join(
        f"{k}: {v['acknowledged']}/{v['attempted']} acknowledged, {v['stored']} stored, {v['lost']} lost, {v['errors']} errors"
        for k, v in c.items()))
    lines.append("corrupted store: " + "; ".join(f"{k}: {v}" for k, v in out["corrupted_store"].items()))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=200, help="creates per process in the two-writer test")
    parser.add_argument("--seed", type=int, default=20260208)
    parser.add_argument("--peer-version", default=None, help="npm version of the peer (default: the latest)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not shutil.which("node") or not shutil.which("npm"):
        print("node and npm are needed for the peer", file=sys.stderr)
        return 2
    out = asyncio.run(run(args))
    print(report(out))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
