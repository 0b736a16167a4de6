"""Relating to and from a hub node (issue 13): the time of one ``relate`` from a node that already has
many relations, against one from a node that has none, in the same store and the same run.

    python bench/hub_relate.py [--edges 1000 10000] [--json out.json]

A store of ``max(edges)`` + 1 concept nodes; the hub relates to them one by one
(``Autology.relate``, as ``autology_relate`` calls it). At each size in ``--edges``, 50 more relates
from the hub are timed, and 50 relates from fresh leaf nodes (one relation each) beside them: the
ratio hub / leaf is what "costs the same whatever the source node's size" asks to be near 1. Each
is also timed in CPU time (the process's, system time included: not the wait for the disk, which
other work on the machine changes from run to run). Then, issue 29's other relates of a hub: 20
relates from fresh leaves *to* the hub, and 20 relates the hub has already, with a new description.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from autology_mcp.knowledge.service import Autology
from autology_mcp.server.startup import GRAPH_INDEX_DELAY


def timed(into: list[tuple[float, float]], call, *args, **kwargs) -> None:
    """Append (wall ms, CPU ms) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call(*args, **kwargs)
    into.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--json", default=None)
    parser.add_argument("--keep", action="store_true", help="keep the generated store (its folder is printed)")
    parser.add_argument("--graph-index-delay", type=float, default=GRAPH_INDEX_DELAY,
                        help=f"seconds before graph/index.json is rewritten after a relate (default {GRAPH_INDEX_DELAY}, the server's; 0 writes it in every relate)")
    args = parser.parse_args()
    sizes = sorted(args.edges)
    root = Path(tempfile.mkdtemp(prefix="autology-hub-")) / "project"
    root.mkdir()
    service = Autology.open(root)
    service.store.graph_index_delay = args.graph_index_delay
    print(f"# load {os.getloadavg()}")
    started = time.perf_counter()
    total = sizes[-1] + 50 * len(sizes)
    targets = [service.capture(f"Target {i}", f"target node {i}", type="concept").id for i in range(total)]
    leaves = [service.capture(f"Leaf {i}", f"leaf node {i}", type="concept").id for i in range(50 * len(sizes))]
    hub = service.capture("Hub", "the node everything relates to", type="component").id
    print(f"# {total + len(leaves) + 1} nodes captured in {time.perf_counter() - started:.0f} s")
    results = []
    done = 0
    started = time.perf_counter()
    for size in sizes:
        while done < size:
            service.relate(hub, targets[done], "relates_to")
            done += 1
        times: dict[str, list[tuple[float, float]]] = {"hub": [], "leaf": [], "to_hub": [], "restate": []}
        for j in range(50):
            timed(times["hub"], service.relate, hub, targets[done], "relates_to")
            done += 1
            timed(times["leaf"], service.relate, leaves[len(results) * 50 + j], targets[j], "relates_to")
        for j in range(20):
            timed(times["to_hub"], service.relate, leaves[len(results) * 50 + j], hub, "uses")
            timed(times["restate"], service.relate, hub, targets[j], "relates_to", description=f"at {size} edges, {j}")
        row = {"edges": size, "hub_file_kb": round(service.store.abs(service.store.index.node_path(hub)).stat().st_size / 1024)}
        for kind, pairs in times.items():
            row[f"{kind}_p50_ms"] = round(statistics.median(w for w, _ in pairs), 2)
            row[f"{kind}_cpu_p50_ms"] = round(statistics.median(c for _, c in pairs), 2)
        row["ratio"] = round(row["hub_p50_ms"] / row["leaf_p50_ms"], 1)
        row["cpu_ratio"] = round(row["hub_cpu_p50_ms"] / row["leaf_cpu_p50_ms"], 1)
        results.append(row)
        print(f"{size:6d} edges: hub relate p50 {row['hub_p50_ms']:.1f} ms, leaf {row['leaf_p50_ms']:.1f} ms,"
              f" ratio {row['ratio']}x (hub file {row['hub_file_kb']} KB); {time.perf_counter() - started:.0f} s so far")
        print(f"{'':6s}        CPU p50: hub {row['hub_cpu_p50_ms']:.2f} ms, leaf {row['leaf_cpu_p50_ms']:.2f} ms,"
              f" ratio {row['cpu_ratio']}x; a leaf to the hub {row['to_hub_p50_ms']:.1f} ms"
              f" (CPU {row['to_hub_cpu_p50_ms']:.2f}), a relation of the hub's restated {row['restate_p50_ms']:.1f} ms"
              f" (CPU {row['restate_cpu_p50_ms']:.2f})")
    print(f"# load {os.getloadavg()}")
    service.close()
    if args.keep:
        print(f"# store kept in {root}")
    else:
        shutil.rmtree(root.parent, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
