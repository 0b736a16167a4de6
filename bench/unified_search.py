"""Latency of unified retrieval (issue 6): ``autology_search`` over real MCP stdio on a store of 10k
nodes plus a large repository's index (sympy), with ``autology_code_search`` and ``autology_query``
on the same queries side by side.

Setup (once; nothing of it is committed):

    git clone /work/.mirror/sympy+sympy/repo /tmp/unified-bench/sympy   # or github.com/sympy/sympy
    git -C /tmp/unified-bench/sympy checkout e950d313a932bc6cccbc95376b3821cd2f8b5af4
    python bench/unified_search.py /tmp/unified-bench/sympy --json /tmp/unified.json

The script builds the repository index if it is missing and writes the 10k generated nodes
(bench/store_corpus.py, seeded) into the clone's ``.autology/nodes/`` if it has none. Queries: half
are the repository's latest non-merge commit subjects (code questions), half are 1-3 word queries
drawn from the node corpus's vocabulary (knowledge questions), interleaved, seeded.

Measured, each after warm-up calls, in one server process started as a user runs it
(``python -m autology_mcp --root R serve``, file watcher on):

- ``autology_search`` with its defaults (all scopes, limit 10, max_tokens 2000);
- ``autology_code_search`` (top 10; it checks every file's size/mtime before each query);
- ``autology_query`` (limit 10);
- the same ``autology_search`` queries in-process (``retrieval.search``, no MCP) to separate the
  engine from the transport, with the median of each stage from the answers' traces.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

TARGET_P50_MS = 50.0
PINNED_SYMPY_COMMIT = "e950d313a932bc6cccbc95376b3821cd2f8b5af4"


def stats(samples_s: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples_s)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[max(0, math.ceil(0.95 * len(ms)) - 1)], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "max_ms": round(ms[-1], 2),
    }


def ensure_setup(root: Path, nodes: int, seed: int) -> dict[str, Any]:
    from autology_mcp.code.config import load_index_config
    from autology_mcp.code.layout import IndexLocation
    from autology_mcp.knowledge.store import NodeStore

    facts: dict[str, Any] = {}
    loc = IndexLocation.of(root, load_index_config(root))
    if not loc.exists():
        from autology_mcp.code.service import build_index

        t = time.perf_counter()
        summary = build_index(root)
        facts["index_built_s"] = round(time.perf_counter() - t, 1)
        print(f"built the repository index: {summary['chunks']} chunks in {facts['index_built_s']} s", file=sys.stderr)
    node_dir = root / ".autology" / "nodes"
    if not node_dir.exists() or not any(node_dir.rglob("*.md")):
        from store_corpus import generate_store

        t = time.perf_counter()
        generate_store(root, nodes, seed=seed)
        print(f"generated {nodes} nodes in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    store = NodeStore(root)
    store.init()
    store.reconcile()
    facts["nodes"] = store.index.count()
    facts["relations"] = sum(store.index.relation_counts().values())
    store.close()
    manifest = json.loads(loc.manifest.read_text())
    facts["index"] = {"namespace": loc.namespace, **manifest.get("stats", {})}
    return facts


def make_queries(root: Path, count: int, seed: int) -> list[str]:
    from store_corpus import QUALIFIERS, SUBJECTS, TECH

    out = subprocess.run(
        ["git", "log", "--no-merges", "--format=%s", f"-n{count * 3}"], cwd=root, capture_output=True, text=True,
        check=True,
    ).stdout.split("\n")
    subjects = [s.strip() for s in out if len(s.split()) >= 3][: count // 2]
    rng = random.Random(seed)
    vocab = [w.replace("-", " ") for w in SUBJECTS + QUALIFIERS + TECH]
    knowledge = [" ".join(rng.sample(vocab, rng.choice([1, 2, 2, 3]))) for _ in range(count - len(subjects))]
    queries: list[str] = []
    for a, b in zip(subjects, knowledge):
        queries += [a, b]
    queries += subjects[len(knowledge):] + knowledge[len(subjects):]
    return queries[:count]


async def measure_mcp(root: Path, queries: list[str], warmup: int) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "autology_mcp", "--root", str(root), "serve"], env={"PYTHONUNBUFFERED": "1"}
    )
    tools = {
        "autology_search": lambda q: {"query": q},
        "autology_code_search": lambda q: {"query": q, "top": 10},
        "autology_query": lambda q: {"query": q, "limit": 10},
    }
    results: dict[str, Any] = {}
    verdicts: dict[str, int] = {}
    async with Client(params) as client:
        for name, args in tools.items():
            for q in queries[:warmup]:
                await client.call_tool(name, args(q))
            samples = []
            for q in queries:
                t = time.perf_counter()
                result = await client.call_tool(name, args(q))
                samples.append(time.perf_counter() - t)
                if result.is_error:
                    raise RuntimeError(f"{name}({q!r}): {result.content[0].text}")
                if name == "autology_search":
                    v = result.structured_content["verdict"]
                    verdicts[v] = verdicts.get(v, 0) + 1
            results[name] = stats(samples)
            print(f"  {name}: {results[name]}", file=sys.stderr)
    results["autology_search_verdicts"] = verdicts
    return results


def measure_in_process(root: Path, queries: list[str], warmup: int) -> dict[str, Any]:
    from autology_mcp.retrieval.engine import search
    from autology_mcp.retrieval.engine import open_store

    store = open_store(root)
    try:
        for q in queries[:warmup]:
            search(root, q, store=store)
        samples, stages = [], {}
        for q in queries:
            t = time.perf_counter()
            answer = search(root, q, store=store, max_tokens=20000)
            samples.append(time.perf_counter() - t)
            for k, v in answer["trace"]["timings_ms"].items():
                stages.setdefault(k, []).append(v)
            for c in answer["trace"]["channels"]:
                if "ms" in c:
                    stages.setdefault(f"channel {c['name']}", []).append(c["ms"])
    finally:
        store.close()
    return {"search": stats(samples), "stage_p50_ms": {k: round(statistics.median(v), 2) for k, v in stages.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="a clone of a large repository (sympy at the pinned commit)")
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20260208)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    root = args.repo.resolve()
    load_before = os.getloadavg()
    facts = ensure_setup(root, args.nodes, args.seed)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    queries = make_queries(root, args.queries, args.seed)
    print(f"{len(queries)} queries; measuring over MCP stdio ...", file=sys.stderr)
    mcp = asyncio.run(measure_mcp(root, queries, args.warmup))
    print("measuring in-process ...", file=sys.stderr)
    local = measure_in_process(root, queries, args.warmup)
    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "repository": {"path": str(root), "head": head, "pinned": PINNED_SYMPY_COMMIT},
        "setup": facts,
        "queries": len(queries),
        "mcp_stdio": mcp,
        "in_process": local,
        "load_average_1m": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "target_p50_ms": TARGET_P50_MS,
    }
    s, c, q = mcp["autology_search"], mcp["autology_code_search"], mcp["autology_query"]
    print()
    print(f"store: {facts['nodes']} nodes, {facts['relations']} relations; index: {facts['index'].get('files')} files, "
          f"{facts['index'].get('chunks')} chunks ({head[:12]}); {len(queries)} queries; load {report['load_average_1m']}")
    print(f"{'over MCP stdio':<46} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for label, row in (("autology_search (all scopes, limit 10)", s), ("autology_code_search (top 10, refresh each call)", c),
                       ("autology_query (limit 10)", q), ("in-process retrieval.search (no MCP)", local["search"])):
        print(f"{label:<46} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['mean_ms']:>8}")
    print(f"target: autology_search p50 <= {TARGET_P50_MS} ms -> {'met' if s['p50_ms'] <= TARGET_P50_MS else 'MISSED'}")
    print(f"verdicts: {mcp['autology_search_verdicts']}")
    print(f"in-process stage p50 ms: {local['stage_p50_ms']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
