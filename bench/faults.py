"""Fault benchmark (issue 7): ``kill -9`` a real ``autology serve`` mid-write, in a loop, and count.

Each iteration starts the server on the same project, pipelines a burst of writes (captures, updates,
relates, deletes), and kills it with SIGKILL at a random moment (about 15% of the kills land during
start-up instead: reconcile and index checks). Right after each kill: every node file must parse and
sit at its path, graph/index.json must be whole JSON, and nothing acknowledged (the client got the
tool result) may be missing. At the end a fresh server starts, and the graph index and the search
index must equal the files. Prints the counts; exit status 1 if anything was lost or broken.

Run:  python bench/faults.py [--iterations 200] [--burst 24] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fault_kit import Ledger, RawServer, check_ledger, check_store, kill_iteration, temp_files_left  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--burst", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ledger = Ledger()
    totals = {"kills": 0, "kills_during_startup": 0, "kills_with_requests_in_flight": 0, "requests_sent": 0,
              "requests_acknowledged": 0, "kills_leaving_a_temp_file": 0, "problems_after_a_kill": 0}
    problems: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="autology-faults-") as tmp:
        root = Path(tmp)
        for iteration in range(args.iterations):
            temps_before = len(temp_files_left(root))
            run = kill_iteration(root, rng, ledger, iteration, burst=args.burst)
            totals["kills"] += 1
            totals["kills_during_startup"] += run["during_startup"]
            totals["kills_with_requests_in_flight"] += run["in_flight"] > 0
            totals["requests_sent"] += run["sent"]
            totals["requests_acknowledged"] += run["acknowledged"]
            totals["kills_leaving_a_temp_file"] += len(temp_files_left(root)) > temps_before
            lost = check_ledger(root, ledger)
            if run["problems"] or lost:
                totals["problems_after_a_kill"] += 1
                problems += [f"iteration {iteration}: {p}" for p in run["problems"] + lost]
            if (iteration + 1) % 25 == 0:
                print(f"  {iteration + 1} kills, {len(ledger.captured)} captures acknowledged", file=sys.stderr)
        server = RawServer(root)
        try:
            server.initialize()
            status = server.call_and_wait("autology_status", {})["structuredContent"]
        finally:
            server.close()
        final = check_store(root)
        lost = check_ledger(root, ledger)
        problems += final["problems"] + lost
        figures = {
            **totals,
            "captures_acknowledged": len(ledger.captured),
            "updates_acknowledged": len(ledger.updates_acked),
            "relations_acknowledged": len(ledger.related),
            "deletes_acknowledged": len(ledger.deleted),
            "acknowledged_writes_lost": len(lost),
            "nodes_on_disk": final["nodes"],
            "relations_on_disk": final["relations"],
            "server_status_nodes": status["totalNodes"],
            "malformed_files": len(status["malformedFiles"]),
            "final_invariant_problems": len(final["problems"]),
            "seconds": round(time.monotonic() - started, 1),
        }
    for key, value in figures.items():
        print(f"{key:32} {value}")
    for problem in problems[:20]:
        print("PROBLEM", problem)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
