"""Relating to and from a hub node (issue 13): the time of one ``relate`` from a node that already has
many relations, against one from a node that has none, in the same store and the same run.

    python bench/hub_relate.py [--edges 1000 10000] [--json out.json]

A store of ``max(edges)`` + 1 concept nodes; the hub relates to them one by one
(``Autology.relate``, as ``autology_relate`` calls it). At each size in ``--edges``, 50 more relates
from the hub are timed, and 50 relates from fresh leaf nodes (one relation each) beside them: the
ratio hub / leaf is what "costs the same whatever the source node's size" asks to be near 1.
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
        hub_ms, leaf_ms = [], []
        for j in range(50):
            t = time.perf_counter()
            service.relate(hub, targets[done], "relates_to")
            hub_ms.append((time.perf_counter() - t) * 1000)
            done += 1
            leaf = leaves[len(results) * 50 + j]
            t = time.perf_counter()
            service.relate(leaf, targets[j], "relates_to")
            leaf_ms.append((time.perf_counter() - t) * 1000)
        row = {"edges": size, "hub_p50_ms": round(statistics.median(hub_ms), 2),
               "leaf_p50_ms": round(statistics.median(leaf_ms), 2),
               "hub_file_kb": round(service.store.abs(service.store.index.node_path(hub)).stat().st_size / 1024)}
        row["ratio"] = round(row["hub_p50_ms"] / row["leaf_p50_ms"], 1)
        results.append(row)
        print(f"{size:6d} edges: hub relate p50 {row['hub_p50_ms']:.1f} ms, leaf {row['leaf_p50_ms']:.1f} ms,"
              f" ratio {row['ratio']}x (hub file {row['hub_file_kb']} KB); {time.perf_counter() - started:.0f} s so far")
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
