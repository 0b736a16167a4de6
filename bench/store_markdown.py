"""Render a bench/store.py JSON result as the Markdown tables of docs/benchmarks.md.

    python bench/store_markdown.py result.json
"""

from __future__ import annotations

import json
import sys

OPS = [
    ("autology_capture", "`autology_capture`"),
    ("autology_query", "`autology_query` (default limit 10)"),
    ("autology_update", "`autology_update`"),
    ("autology_relate", "`autology_relate`"),
    ("autology_query limit=1", "`autology_query` with `limit: 1`"),
    ("tools/list", "`tools/list` on the autology server"),
    ("query in-process", "the same queries in-process (`Autology.query`, no MCP)"),
]


def ms(s: dict) -> str:
    return f"{s['p50_ms']:.2f} / {s['p95_ms']:.2f} / {s['mean_ms']:.2f}"


def render(report: dict) -> str:
    sizes = report["sizes"]
    out = []
    head = "| operation, over MCP stdio | " + " | ".join(f"{r['nodes']:,} nodes: p50 / p95 / mean ms" for r in sizes) + " |"
    out.append(head)
    out.append("|---|" + "---:|" * len(sizes))
    for key, label in OPS:
        out.append(f"| {label} | " + " | ".join(ms(r["tools"][key]) for r in sizes) + " |")
    floor = report.get("floor")
    if floor:
        blank = " | ".join("" for _ in sizes[1:])
        out.append(f"| floor: `echo` on a trivial server (bench/store_floor_server.py) | {ms(floor['echo'])} |{blank} |")
        out.append(f"| floor: `tools/list` on the trivial server | {ms(floor['tools/list'])} |{blank} |")
    out.append("")
    out.append("| start-up and rebuild | " + " | ".join(f"{r['nodes']:,} nodes" for r in sizes) + " |")
    out.append("|---|" + "---:|" * len(sizes))
    rows = [
        ("cold start, warm cache: spawn to first query answered (median of runs)", "warm_cache"),
        ("cold start, `.autology/cache/` deleted (median of runs)", "no_cache"),
    ]
    for label, key in rows:
        cells = []
        for r in sizes:
            c = r["cold_start"]
            runs = ", ".join(f"{x:.2f}" for x in c[f"{key}_s"])
            cells.append(f"{c[f'{key}_median_s']:.3f} s ({runs})")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append(
        "| full rebuild of the derived indexes, `python -m autology_mcp --root R rebuild` (wall) | "
        + " | ".join(f"{r['rebuild']['wall_s']:.3f} s" for r in sizes)
        + " |"
    )
    out.append(
        "| the same rebuild, time reported by the command (in-process) | "
        + " | ".join(f"{r['rebuild']['in_process_s']:.3f} s" for r in sizes)
        + " |"
    )
    if floor:
        runs = ", ".join(f"{x:.2f}" for x in floor["cold_start_s"])
        blank = " | ".join("" for _ in sizes[1:])
        out.append(f"| floor: trivial server, spawn to first `echo` answered | {floor['cold_start_median_s']:.3f} s ({runs}) |{blank} |")
    out.append("")
    loads = "; ".join(f"{r['nodes']:,} nodes: {r['load_average_1m'][0]} before, {r['load_average_1m'][1]} after" for r in sizes)
    out.append(f"Machine: {report['machine']}. 1-minute load average: {loads}.")
    return "\n".join(out)


if __name__ == "__main__":
    print(render(json.load(open(sys.argv[1]))))
