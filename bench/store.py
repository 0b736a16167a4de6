"""Store benchmark (issue 2): the seven tools over real MCP stdio at 1k and 10k nodes.

For each size N:

1. generate a realistic store of N nodes (seeded, deterministic: bench/store_corpus.py) by writing
   node files directly (setup, not measured);
2. time ``python -m autology_mcp --root R rebuild`` as a subprocess (the full rebuild of the
   derived indexes: SQLite FTS5 index and graph/index.json, from the files; wall time including
   interpreter start-up, plus the in-process time the command reports);
3. start the server as a subprocess (``python -m autology_mcp --root R serve``, watcher on, as a
   user runs it) with the SDK's ``Client`` over stdio, and time ``autology_capture``,
   ``autology_query``, ``autology_update`` and ``autology_relate`` calls (after warm-up calls),
   plus ``tools/list`` (client cache bypassed) as a cheap round-trip on the same server;
4. cold start: spawn the server, handshake, first ``autology_query`` answered — with the cache
   warm, and with ``.autology/cache/`` deleted beforehand.

The floor is a trivial ``echo`` MCP server on the same SDK (bench/store_floor_server.py), timed
the same way. Run:  python bench/store.py [--sizes 1000 10000] [--calls 200] [--json out.json]

``--queries-on ROOT [ROOT ...]`` times only ``autology_query`` (over stdio, then in-process: wall and
CPU) on stores already built, with the queries the full run draws for ``--sizes N`` (the first size),
taking turns between the stores for ``--rounds`` rounds: before and after side by side on one
machine state, e.g. a store built by the old code next to a copy built by the new (each server runs
this interpreter: run it once per checkout, or point ``--python`` at the other checkout's).
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
from store_corpus import CorpusGenerator, generate_store  # noqa: E402

from autology_mcp.knowledge.models import RelationType  # noqa: E402

TARGETS = {"capture_p50_ms": 5.0, "query_p50_ms": 5.0, "cold_start_warm_s": 1.5, "rebuild_s": 15.0}


# ------------------------------------------------------------------------------ statistics


def summary(samples_s: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples_s)
    p95 = ms[max(0, math.ceil(0.95 * len(ms)) - 1)]
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(p95, 3),
        "mean_ms": round(statistics.fmean(ms), 3),
        "max_ms": round(ms[-1], 3),
    }


# ------------------------------------------------------------------------------ servers


def autology_params(root: Path, watch: bool = True) -> StdioServerParameters:
    args = ["-m", "autology_mcp", "--root", str(root), "serve"]
    if not watch:
        args.append("--no-watch")
    return StdioServerParameters(command=sys.executable, args=args, env={"PYTHONUNBUFFERED": "1"})


def floor_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(HERE / "store_floor_server.py")])


def server_memory_mb(root: Path) -> dict[str, float] | None:
    """The resident memory of the ``autology serve`` process for ``root`` (Linux /proc): now and its
    peak (VmRSS, VmHWM), in MB; None when it cannot be found."""
    want = ["--root", str(root), "serve"]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            if "autology_mcp" not in argv or not all(w in argv for w in want):
                continue
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue
        kb = lambda key: int(fields[key].split()[0])  # noqa: E731
        return {"rss_mb": round(kb("VmRSS") / 1024, 1), "peak_mb": round(kb("VmHWM") / 1024, 1)}
    return None


async def call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise RuntimeError(f"{name}({arguments}) failed: {text}")
    return result


async def timed(fn, count: int, warmup: int) -> list[float]:
    for i in range(warmup):
        await fn(-1 - i)
    samples = []
    for i in range(count):
        started = time.perf_counter()
        await fn(i)
        samples.append(time.perf_counter() - started)
    return samples


# ------------------------------------------------------------------------------ measurements


async def measure_tools(
    root: Path, nodes: list[tuple[str, str]], calls: int, warmup: int, seed: int, gen: CorpusGenerator | None = None
) -> dict:
    gen = gen or CorpusGenerator(seed)
    rng = gen.rng
    ids = [i for i, _ in nodes]
    types = dict(nodes)
    relation_types = [r.value for r in RelationType]
    results: dict[str, Any] = {}
    async with Client(autology_params(root)) as client:
        # A cheap round trip on the same server: tools/list, past the client's response cache.
        async def list_tools(_: int) -> None:
            await client.list_tools(cache_mode="bypass")

        results["tools/list"] = summary(await timed(list_tools, calls, warmup))

        async def capture(_: int) -> None:
            node_type = gen.node_type()
            result = await call(
                client,
                "autology_capture",
                {"title": gen.title(node_type), "content": gen.content(node_type), "type": node_type, "tags": gen.tags()},
            )
            created = result.structured_content
            nodes.append((created["id"], node_type))
            types[created["id"]] = node_type

        results["autology_capture"] = summary(await timed(capture, calls, warmup))

        queries = [gen.query() for _ in range(calls + warmup)]

        async def query(i: int) -> None:
            await call(client, "autology_query", {"query": queries[i]})

        results["autology_query"] = summary(await timed(query, calls, warmup))

        async def query_one(i: int) -> None:
            await call(client, "autology_query", {"query": queries[i], "limit": 1})

        results["autology_query limit=1"] = summary(await timed(query_one, calls, warmup))

        async def update(_: int) -> None:
            node_id = rng.choice(ids)
            kind = rng.random()
            if kind < 0.5:
                args = {"id": node_id, "content": gen.content(types[node_id])}
            elif kind < 0.8:
                args = {"id": node_id, "tags": gen.tags()}
            else:
                args = {"id": node_id, "status": rng.choice(["active", "needs_review"]), "confidence": 0.85}
            await call(client, "autology_update", args)

        results["autology_update"] = summary(await timed(update, calls, warmup))

        async def relate(_: int) -> None:
            source, target = rng.sample(ids, 2)
            args = {"source": source, "target": target, "type": rng.choice(relation_types)}
            if rng.random() < 0.3:
                args["description"] = gen.paragraph(1)[:120]
            await call(client, "autology_relate", args)

        results["autology_relate"] = summary(await timed(relate, calls, warmup))
        results["server_rss_mb"] = server_memory_mb(root)  # after every operation, while still connected

    # The same queries in-process (the service alone, no MCP): what the server itself spends.
    from autology_mcp.knowledge.service import Autology

    autology = Autology.open(root)
    try:
        for q in queries[:warmup]:
            autology.query(q)
        samples = []
        for q in queries[warmup:]:
            started = time.perf_counter()
            autology.query(q)
            samples.append(time.perf_counter() - started)
        results["query in-process"] = summary(samples)
    finally:
        autology.close()
    return results


async def first_answer(params: StdioServerParameters, tool: str, arguments: dict[str, Any]) -> float:
    """Seconds from spawning the server to the first tool answer (handshake included)."""
    started = time.perf_counter()
    async with Client(params) as client:
        await call(client, tool, arguments)
        elapsed = time.perf_counter() - started
    return elapsed


async def measure_cold_start(root: Path, warm_runs: int, cold_runs: int, query: str) -> dict:
    args = {"query": query}
    await first_answer(autology_params(root), "autology_query", args)  # make sure the cache is warm
    warm = [await first_answer(autology_params(root), "autology_query", args) for _ in range(warm_runs)]
    cold = []
    for _ in range(cold_runs):
        shutil.rmtree(root / ".autology" / "cache")
        cold.append(await first_answer(autology_params(root), "autology_query", args))
    return {
        "warm_cache_s": [round(x, 3) for x in warm],
        "warm_cache_median_s": round(statistics.median(warm), 3),
        "no_cache_s": [round(x, 3) for x in cold],
        "no_cache_median_s": round(statistics.median(cold), 3),
    }


async def measure_floor(calls: int, warmup: int, runs: int) -> dict:
    async with Client(floor_params()) as client:

        async def echo(_: int) -> None:
            await call(client, "echo", {"text": "ping"})

        async def list_tools(_: int) -> None:
            await client.list_tools(cache_mode="bypass")

        echo_stats = summary(await timed(echo, calls, warmup))
        list_stats = summary(await timed(list_tools, calls, warmup))
    starts = [await first_answer(floor_params(), "echo", {"text": "ping"}) for _ in range(runs)]
    return {
        "echo": echo_stats,
        "tools/list": list_stats,
        "cold_start_s": [round(x, 3) for x in starts],
        "cold_start_median_s": round(statistics.median(starts), 3),
    }


def measure_rebuild(root: Path) -> dict:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "autology_mcp", "--root", str(root), "rebuild", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - started
    data = json.loads(out.stdout)
    return {"wall_s": round(wall, 3), "in_process_s": data["seconds"], "nodes": data["nodes"]}


# ------------------------------------------------------------------------------ driver


def text_generator(args: argparse.Namespace, seed: int) -> CorpusGenerator | None:
    """With --text-corpus, a generator of real docstring text (store_text.py); else None (synthetic)."""
    if args.text_corpus is None:
        return None
    from store_text import TextGenerator, load_entries

    if not hasattr(args, "_entries"):
        args._entries = load_entries(args.text_corpus)
        print(f"text corpus: {len(args._entries)} docstrings from {args.text_corpus}", file=sys.stderr)
    return TextGenerator(seed, args._entries)


def run_size(size: int, data_dir: Path, args: argparse.Namespace) -> dict:
    load_before = round(os.getloadavg()[0], 2)
    root = data_dir / f"store-{size}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    started = time.perf_counter()
    nodes = generate_store(root, size, seed=args.seed, gen=text_generator(args, args.seed))
    setup_s = time.perf_counter() - started
    print(f"[{size}] generated {size} node files in {setup_s:.1f} s", file=sys.stderr)
    rebuild = measure_rebuild(root)
    print(f"[{size}] rebuild: {rebuild}", file=sys.stderr)
    tools = asyncio.run(
        measure_tools(root, nodes, args.calls, args.warmup, args.seed + size, text_generator(args, args.seed + size))
    )
    print(f"[{size}] tools measured", file=sys.stderr)
    cold = asyncio.run(measure_cold_start(root, args.warm_runs, args.cold_runs, "cache invalidation"))
    print(f"[{size}] cold start measured", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(root)
    return {
        "nodes": size,
        "setup_s": round(setup_s, 2),
        "rebuild": rebuild,
        "tools": tools,
        "cold_start": cold,
        "load_average_1m": [load_before, round(os.getloadavg()[0], 2)],
    }


async def time_queries(python: str, root: Path, queries: list[str], warmup: int) -> dict:
    """``autology_query`` over stdio on an existing store (a server run by ``python``)."""
    # cwd: "python -m" imports from the current folder first, which would be this checkout's code
    params = StdioServerParameters(
        command=python, args=["-m", "autology_mcp", "--root", str(root), "serve"], env={"PYTHONUNBUFFERED": "1"},
        cwd=str(root),
    )
    async with Client(params) as client:
        for q in queries[:warmup]:
            await call(client, "autology_query", {"query": q})
        samples = []
        for q in queries[warmup:]:
            started = time.perf_counter()
            await call(client, "autology_query", {"query": q})
            samples.append(time.perf_counter() - started)
        memory = server_memory_mb(root)
    return {"autology_query": summary(samples), "server_rss_mb": memory}


def in_process_queries(python: str, root: Path, queries: list[str], warmup: int) -> dict:
    """The same queries in a process of ``python`` (its own checkout's code): wall and CPU time."""
    script = (
        "import json, sys, time\n"
        "from autology_mcp.knowledge.service import Autology\n"
        "root, warmup, queries = sys.argv[1], int(sys.argv[2]), json.loads(sys.stdin.read())\n"
        "a = Autology.open(root)\n"
        "for q in queries[:warmup]: a.query(q)\n"
        "wall, cpu = [], []\n"
        "for q in queries[warmup:]:\n"
        "    w, c = time.perf_counter(), time.thread_time(); a.query(q)\n"
        "    wall.append(time.perf_counter() - w); cpu.append(time.thread_time() - c)\n"
        "print(json.dumps([wall, cpu]))\n"
    )
    out = subprocess.run(
        [python, "-c", script, str(root), str(warmup)], input=json.dumps(queries), capture_output=True, text=True,
        check=True, cwd="/",
    )
    wall, cpu = json.loads(out.stdout)
    return {"wall": summary(wall), "cpu": summary(cpu)}


def queries_on(args: argparse.Namespace) -> int:
    size = args.sizes[0]
    gen = text_generator(args, args.seed + size) or CorpusGenerator(args.seed + size)
    queries = [gen.query() for _ in range(args.calls + args.warmup)]
    pythons = args.python or [sys.executable] * len(args.queries_on)
    if len(pythons) != len(args.queries_on):
        raise SystemExit("--python: one interpreter per store, or none")
    runs: list[dict] = []
    for round_ in range(args.rounds):
        for python, root in zip(pythons, args.queries_on):
            load = round(os.getloadavg()[0], 2)
            stdio = asyncio.run(time_queries(python, root, queries, args.warmup))
            local = in_process_queries(python, root, queries, args.warmup)
            run = {"round": round_ + 1, "store": str(root), "python": python, "load_before": load, **stdio,
                   "in_process": local, "load_after": round(os.getloadavg()[0], 2)}
            runs.append(run)
            q, w, c = stdio["autology_query"], local["wall"], local["cpu"]
            print(f"round {round_ + 1}  {root}  ({python}), load {load} -> {run['load_after']}:"
                  f" stdio p50 {q['p50_ms']:.2f} p95 {q['p95_ms']:.2f} ms; in-process wall p50 {w['p50_ms']:.2f},"
                  f" CPU p50 {c['p50_ms']:.2f} ms; server RSS {stdio['server_rss_mb']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "command": " ".join(sys.argv), "runs": runs}, indent=2) + "\n")
    return 0


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_report(report: dict) -> None:
    print(f"\nmachine: {report['machine']}")
    loads = ", ".join(f"{r['nodes']} nodes {r['load_average_1m'][0]} -> {r['load_average_1m'][1]}" for r in report["sizes"])
    print(f"1-minute load average before -> after each size: {loads}")
    print(f"calls per operation: {report['calls']} (after {report['warmup']} warm-up calls)\n")
    ops = [
        "autology_capture",
        "autology_query",
        "autology_update",
        "autology_relate",
        "autology_query limit=1",
        "tools/list",
        "query in-process",
    ]
    header = f"{'operation':<24}" + "".join(
        "{:>36}".format(f"{r['nodes']} nodes p50 / p95 / mean ms") for r in report["sizes"]
    )
    print(header)
    print("-" * len(header))
    for op in ops:
        line = f"{op:<24}"
        for r in report["sizes"]:
            s = r["tools"][op]
            line += f"{s['p50_ms']:>16.2f} / {s['p95_ms']:>7.2f} / {s['mean_ms']:>7.2f}"
        print(line)
    floor = report.get("floor")
    if floor:
        for op in ("echo", "tools/list"):
            s = floor[op]
            print(f"{'floor ' + op:<24}{s['p50_ms']:>16.2f} / {s['p95_ms']:>7.2f} / {s['mean_ms']:>7.2f}   (trivial server)")
    print()
    print(f"{'start-up and rebuild':<40}" + "".join(f"{str(r['nodes']) + ' nodes':>16}" for r in report["sizes"]))
    rows = [
        ("cold start, warm cache (median s)", lambda r: r["cold_start"]["warm_cache_median_s"]),
        ("cold start, cache deleted (median s)", lambda r: r["cold_start"]["no_cache_median_s"]),
        ("full rebuild, CLI wall (s)", lambda r: r["rebuild"]["wall_s"]),
        ("full rebuild, in-process (s)", lambda r: r["rebuild"]["in_process_s"]),
    ]
    for label, get in rows:
        print(f"{label:<40}" + "".join(f"{get(r):>16.3f}" for r in report["sizes"]))
    mem = [r["tools"].get("server_rss_mb") or {} for r in report["sizes"]]
    print(f"{'server RSS after the calls / peak (MB)':<40}" + "".join(
        f"{str(m.get('rss_mb', '?')) + ' / ' + str(m.get('peak_mb', '?')):>16}" for m in mem))
    if floor:
        print(f"{'floor: spawn to first echo (median s)':<40}{floor['cold_start_median_s']:>16.3f}")
    huge = next((r for r in report["sizes"] if r["nodes"] == 100000), None)
    if huge:  # issue 17
        t, m = huge["tools"], huge["tools"].get("server_rss_mb") or {}
        print("\ntargets at 100k nodes (issue 17):")
        for op in ("autology_capture", "autology_query"):
            print(f"  {op} p50 <= 15 ms: {t[op]['p50_ms']:.2f} ms  {verdict(t[op]['p50_ms'] <= 15)}")
        print(f"  full rebuild <= 60 s: {huge['rebuild']['wall_s']:.1f} s  {verdict(huge['rebuild']['wall_s'] <= 60)}")
        if m:
            print(f"  server RSS <= 600 MB: {m['peak_mb']} MB peak  {verdict(m['peak_mb'] <= 600)}")
    big = next((r for r in report["sizes"] if r["nodes"] == 10000), None)
    if big:
        t = big["tools"]
        print("\ntargets at 10k nodes:")
        print(f"  capture p50 <= 5 ms: {t['autology_capture']['p50_ms']:.2f} ms  {verdict(t['autology_capture']['p50_ms'] <= 5)}")
        print(f"  query p50 <= 5 ms: {t['autology_query']['p50_ms']:.2f} ms  {verdict(t['autology_query']['p50_ms'] <= 5)}")
        w = big["cold_start"]["warm_cache_median_s"]
        print(f"  cold start (warm cache) <= 1.5 s: {w:.3f} s  {verdict(w <= 1.5)}")
        b = big["rebuild"]["wall_s"]
        print(f"  full rebuild <= 15 s: {b:.3f} s  {verdict(b <= 15)}")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--calls", type=int, default=200, help="measured calls per operation")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--warm-runs", type=int, default=5, help="cold starts with a warm cache")
    parser.add_argument("--cold-runs", type=int, default=3, help="cold starts with the cache deleted")
    parser.add_argument("--seed", type=int, default=20260208)
    parser.add_argument("--data", type=Path, default=None, help="where to build the stores (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated stores")
    parser.add_argument("--no-floor", action="store_true", help="skip the trivial-server floor")
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    parser.add_argument(
        "--text-corpus", type=Path, default=None, metavar="REPO",
        help="take node text and queries from the docstrings of this git clone (sympy at e950d313, store_text.py) "
        "instead of the synthetic ~600-word vocabulary",
    )
    parser.add_argument("--queries-on", type=Path, nargs="+", default=None, metavar="ROOT",
                        help="only time autology_query on these existing stores, taking turns (see above)")
    parser.add_argument("--python", nargs="+", default=None,
                        help="with --queries-on: the interpreter serving each store (default: this one for all)")
    parser.add_argument("--rounds", type=int, default=2, help="with --queries-on: turns per store")
    args = parser.parse_args()
    if args.queries_on:
        return queries_on(args)

    tmp = None
    data_dir = args.data
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="autology-bench-")
        data_dir = Path(tmp)
    data_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "machine": machine(),
        "calls": args.calls,
        "warmup": args.warmup,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "corpus": f"docstrings of {args.text_corpus}" if args.text_corpus else "synthetic",
        "sizes": [],
    }
    try:
        if not args.no_floor:
            report["floor"] = asyncio.run(measure_floor(args.calls, args.warmup, args.warm_runs))
        for size in args.sizes:
            report["sizes"].append(run_size(size, data_dir, args))
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
