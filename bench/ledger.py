"""Cost of recording a verdict in the retrieval ledger (issue 6: it must stay well under 1 ms).

Times ``ledger.record_verdict`` in one process, then in two processes recording at the same time
(each process's own per-call times), and checks that no count was lost.

    python bench/ledger.py [--dir /work/tmp-ledger-bench] [--n 5000]

Run it on the disk the projects live on (the default temporary directory may be a RAM disk).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autology_mcp.retrieval import ledger

WORKER = """
import json, sys, time
from pathlib import Path
from autology_mcp.retrieval import ledger
root, n = Path(sys.argv[1]), int(sys.argv[2])
ledger.record_verdict(root, "weak")  # open the connection outside the timing
print("ready", flush=True)
sys.stdin.readline()
times = []
for i in range(n):
    t = time.perf_counter()
    ledger.record_verdict(root, "grounded")
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps(times))
"""


def summary(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {
        "p50_ms": round(statistics.median(times), 4),
        "p99_ms": round(times[int(len(times) * 0.99) - 1], 4),
        "max_ms": round(times[-1], 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, help="where to make the temporary project (default: the system temp dir)")
    ap.add_argument("--n", type=int, default=5000, help="records per process")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="autology-ledger-bench-", dir=args.dir))
    try:
        one, two = base / "one", base / "two"
        for project in (one, two):
            (project / ".autology").mkdir(parents=True)  # the ledger counts only in a project with a store
        ledger.record_verdict(one, "weak")
        times = []
        for _ in range(args.n):
            t = time.perf_counter()
            ledger.record_verdict(one, "grounded")
            times.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        for _ in range(1000):
            ledger.counters(one)
        counters_ms = (time.perf_counter() - t)

        procs = [
            subprocess.Popen([sys.executable, "-c", WORKER, str(two), str(args.n)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        both = []
        for p in procs:
            out, _ = p.communicate()
            both.extend(json.loads(out))
        counts = ledger.counters(two)["verdicts"]
        results = {
            "records_per_process": args.n,
            "one_process": summary(times),
            "two_processes_at_once": summary(both),
            "two_processes_lost_counts": 2 * args.n - counts["grounded"],
            "counters_read_ms": round(counters_ms, 4),
            "directory": str(base),
        }
        print(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
