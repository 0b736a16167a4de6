"""Load benchmark (issue 7): N real ``autology serve`` processes x M concurrent tool calls on one project.

Each process is driven through the MCP SDK's stdio ``Client`` by M concurrent tasks doing a mix of
capture, query, relate, update, delete and unrelate for a bounded time. Then, with no repair step in
between, the invariants are checked from the files: every acknowledged capture is on disk (unless it
was deleted), no relation dangles, graph/index.json equals the relations in the files, and the search
index (SQLite) equals the files. Prints throughput and the invariant results; exit status 1 on a failure.

Run:  python bench/load.py [--processes 4] [--concurrency 8] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fault_kit import check_ledger, check_store, run_load  # noqa: E402

from autology_mcp.knowledge.service import Autology  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="autology-load-") as tmp:
        root = Path(tmp)
        Autology.open(root).close()
        run = asyncio.run(run_load(root, args.processes, args.concurrency, args.seconds, args.seed))
        store = check_store(root)
        lost = check_ledger(root, run["ledger"])
    ledger = run["ledger"]
    calls = sum(run["counts"].values())
    figures = {
        "processes": args.processes,
        "concurrency_per_process": args.concurrency,
        "seconds": round(run["elapsed_s"], 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "calls": calls,
        "calls_per_second": round(calls / run["elapsed_s"], 1),
        "calls_by_tool": run["counts"],
        "not_found_races": run["races"],
        "unexpected_errors": len(run["unexpected"]),
        "captures_acknowledged": len(ledger.captured),
        "deletes_acknowledged": len(ledger.deleted),
        "relations_acknowledged": len(ledger.related),
        "updates_acknowledged": len(ledger.updates_acked),
        "acknowledged_writes_lost": len(lost),
        "nodes_on_disk": store["nodes"],
        "relations_on_disk": store["relations"],
        "invariant_problems": store["problems"],
    }
    for key, value in figures.items():
        print(f"{key:28} {value}")
    for line in run["unexpected"][:10] + lost[:10]:
        print("PROBLEM", line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    return 1 if run["unexpected"] or lost or store["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
