"""The evidence gate, measured (issue 28): what the prompt hook injects and what ``autology_search``
calls grounded, on prompts about the project and on prompts about nothing any project knows, side by
side for several checkouts of the code in one run, and the gate's risk-coverage curve.

    python bench/gate_sets.py --mirrors /work/.mirror            # the sets (bench/gate_sets.py)
    git worktree add /tmp/gate-5f378d6 5f378d6                   # the code to compare with (repeat
    git worktree add /tmp/gate-2fb10ee 2fb10ee                   # --against for several)
    python bench/gate_eval.py --mirrors /work/.mirror --workdir /tmp/gate --against /tmp/gate-5f378d6 \\
        --against /tmp/gate-2fb10ee [--json out.json] [--svg docs/gate-curve.svg]   # about 12 minutes a checkout

``--semantic MODEL_DIR`` turns semantic recall on in every store of the run (``autology semantic enable
--path``; give it its own ``--workdir``), so a run measures the records' vectors (issue 37).

Each checkout is measured by a process of its own (``PYTHONPATH`` = that checkout), which builds its
own three stores under ``--workdir`` (a clone of the project, its records as nodes, its code index)
and then, for each store, runs the domain's on-topic prompts and every off-topic prompt through:

- the prompt hook (``user_prompt_submit``, a new session per prompt, the default configuration):
  injected or not, and the items of the block (a record of the domain, or anything else);
- ``autology_search`` (``retrieval.engine.search`` with the tool's defaults) on the prompt as it is:
  the verdict, the best hit, and the gate's confidence when the checkout reports one
  (``trace.gate.confidence``).

Figures (each split apart; the held-out ones are the ones to report):

- off-topic, over every store: the share of prompts the hook injects for, and that search calls
  ``grounded`` or ``ambiguous``;
- on-topic, per domain: the share injected, the share whose block holds the governing record, the
  mean number of other items per injection, and search's ``grounded`` share and best-hit accuracy;
- the curve: for each threshold on the confidence, coverage (the share of on-topic prompts answered
  grounded at or above it) and risk (the share of those answers, off-topic prompts included, whose
  best hit is not the governing record).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELD_BACK = "(held back until a person reviews it"  # the prompt hook's words for a record named by its id alone
REPO = HERE.parent


# ------------------------------------------------------------------------------ one checkout (a worker)


def build_store(domain, project: Path) -> None:
    """A clone of the domain's project, its records written as nodes, its code index built."""
    from knowledge_eval import write_store

    from autology_mcp.code import service as code_index

    if project.exists():
        shutil.rmtree(project)
    project.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--shared", str(domain.code), str(project)], check=True)
    write_store(project, list(domain.nodes.values()))
    if domain.exclude_globs:
        (project / ".autology" / "config.toml").write_text(f"[index]\nexclude_globs = {json.dumps(domain.exclude_globs)}\n")
    t = time.perf_counter()
    summary = code_index.build_index(project)
    print(f"  {domain.name}: {len(domain.nodes)} records, {summary.get('files')} files indexed in "
          f"{time.perf_counter() - t:.1f} s", file=sys.stderr)


def block_items(text: str, ids: dict[str, str]) -> list[str]:
    """The items of a prompt block: a record's key when the item names one of the domain's node ids,
    else the item's head (a code or doc line, a session, another node)."""
    by_id = {v: k for k, v in ids.items()}
    items = []
    for line in text.split("\n"):
        if not line.startswith("- ") or HELD_BACK in line:  # a record named by its id alone: named, not shown
            continue
        head = line.split(" — ", 1)[0]  # "- [decision] <id>: "title"", or "- [decision] title (<id>)" before f5230a6
        key = next((by_id[i] for i in by_id if i in head), None)
        items.append(key or head[2:])
    return items


def named_items(text: str, ids: dict[str, str]) -> list[str]:
    """The records a prompt block names without their text: its "Also about this" line (issue 37), and a record
    held back until a person reviews it (its text addresses the agent), which the block names by its id alone."""
    lines = [line for line in text.split("\n") if line.startswith("Also about this") or HELD_BACK in line]
    return [key for key, node_id in ids.items() if any(node_id in line for line in lines)]


def measure(project: Path, prompts: list[dict], ids: dict[str, str], rankings: bool = False) -> list[dict]:
    """Each prompt through the hook and search; with ``rankings`` (the on-topic prompts), also
    ``autology_query``'s ten best records and plain BM25's over the same records (issue 37)."""
    from knowledge_eval import PlainBM25

    from autology_mcp.hooks.prompt import prompt_query, user_prompt_submit
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.retrieval.engine import search

    by_id = {v: k for k, v in ids.items()}
    autology = Autology.open(project) if rankings else None
    bm25 = PlainBM25(list(autology.store.index.all_nodes())) if autology else None
    rows = []
    for p in prompts:
        t = time.perf_counter()
        out = user_prompt_submit({"session_id": f"gate-{uuid.uuid4().hex}", "cwd": str(project),
                                  "hook_event_name": "UserPromptSubmit", "prompt": p["prompt"]}, project)
        hook_ms = (time.perf_counter() - t) * 1000
        text = out["hookSpecificOutput"]["additionalContext"] if out else ""
        t = time.perf_counter()
        answer = search(project, p["prompt"][:2000])
        search_ms = (time.perf_counter() - t) * 1000
        hits = answer["hits"]
        best = (by_id.get(hits[0].get("node_id") or "", hits[0]["ref"]) if hits else None)
        gate = answer.get("trace", {}).get("gate") or {}
        hook_answer = search(project, prompt_query(p["prompt"]), limit=10, detail="brief", refresh_code=False)
        rows.append({
            **p,
            "items": block_items(text, ids) if text else [],
            "named": named_items(text, ids) if text else [],
            "verdict": answer["verdict"],
            "best": best,
            "confidence": gate.get("confidence"),
            "unknown_share": gate.get("unknown_share"),
            # the hook's own search (the prompt without its request words): what the gate is fitted on
            "hook_hits": [{"key": by_id.get(h.get("node_id") or "", h["ref"]), "kind": h["kind"], "score": h["score"],
                           **{k: h["components"].get(k) for k in ("coverage", "title_coverage", "support")}}
                          for h in hook_answer["hits"]],
            "hook_unknown_share": (hook_answer["trace"].get("gate") or {}).get("unknown_share"),
            "hook_ms": round(hook_ms, 2),
            "search_ms": round(search_ms, 2),
            "chars": len(text),
        })
        if autology is not None:
            rows[-1]["query_ranking"] = [by_id.get(h.node.id, h.node.id) for h in autology.query(p["prompt"], limit=10)]
            rows[-1]["bm25_ranking"] = [by_id.get(i, i) for i in bm25(p["prompt"])]
    if autology is not None:
        autology.close()
    return rows


def worker(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(HERE))
    import gate_sets

    workdir = args.workdir / args.label
    off_topic, _ = gate_sets.off_topic(args.mirrors)
    import autology_mcp

    results: dict = {"label": args.label, "autology_mcp": str(Path(autology_mcp.__file__).parent), "stores": {}}
    for name, build in gate_sets.DOMAINS.items():
        domain = build(args.mirrors)
        project = workdir / name
        if args.rebuild or not (project / ".autology" / "cache").exists():
            build_store(domain, project)
        if args.semantic:  # semantic recall on in this store (issue 37: the records' vectors re-rank the node search)
            from autology_mcp.cli.main import main as autology

            t = time.perf_counter()
            if autology(["--root", str(project), "semantic", "enable", "--path", str(args.semantic)]) != 0:
                raise SystemExit(f"semantic recall could not be enabled with {args.semantic}")
            print(f"  {name}: semantic recall on, vectors made in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        ids = domain.node_ids()
        t = time.perf_counter()
        on = measure(project, [{**q, "kind": "on"} for q in domain.queries], ids, rankings=True)
        off = measure(project, [{**q, "kind": "off"} for q in off_topic], ids)
        print(f"  {name}: {len(on)} on-topic and {len(off)} off-topic prompts in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)
        results["stores"][name] = on + off
    args.out.write_text(json.dumps(results))
    return 0


# ------------------------------------------------------------------------------ the figures


def _share(rows: list[dict], test) -> float:
    return sum(1 for r in rows if test(r)) / len(rows) if rows else 0.0


def figures(results: dict, split: str) -> dict:
    """The figures of one split: off-topic per store and over all stores, on-topic per domain and over all."""
    rows = [r for rs in results["stores"].values() for r in rs if r["split"] == split]
    out: dict = {"off": {}, "on": {}}
    for store, store_rows in results["stores"].items():
        out["off"][store] = _off([r for r in store_rows if r["kind"] == "off" and r["split"] == split])
        out["on"][store] = _on([r for r in store_rows if r["kind"] == "on" and r["split"] == split])
    out["off"]["all"] = _off([r for r in rows if r["kind"] == "off"])
    out["on"]["all"] = _on([r for r in rows if r["kind"] == "on"])
    out["hook_ms_p50"] = statistics.median(r["hook_ms"] for r in rows) if rows else 0.0
    out["search_ms_p50"] = statistics.median(r["search_ms"] for r in rows) if rows else 0.0
    return out


def _mrr(rows: list[dict], field: str) -> float | None:
    ranked = [r[field] for r in rows if field in r]
    if not ranked or len(ranked) < len(rows):
        return None
    return statistics.fmean(1 / (ranking.index(r["answer"]) + 1) if r["answer"] in ranking[:10] else 0.0
                            for r, ranking in zip(rows, ranked))


def _on(rows: list[dict]) -> dict:
    injected = [r for r in rows if r["items"]]
    query_first = [r for r in rows if (r.get("query_ranking") or [None])[0] == r["answer"]]
    return {
        "prompts": len(rows),
        "injected": _share(rows, lambda r: r["items"]),
        "governing_injected": _share(rows, lambda r: r["answer"] in r["items"]),
        "governing_named": _share(rows, lambda r: r["answer"] in r["items"] + r.get("named", [])),
        "named_per_injection": statistics.fmean(len(r.get("named", [])) for r in injected) if injected else 0.0,
        "others_per_injection": statistics.fmean(sum(1 for i in r["items"] if i != r["answer"]) for r in injected)
        if injected else 0.0,
        "items_per_injection": statistics.fmean(len(r["items"]) for r in injected) if injected else 0.0,
        "grounded": _share(rows, lambda r: r["verdict"] in ("grounded", "ambiguous")),
        "best_is_governing": _share(rows, lambda r: r["best"] == r["answer"]),
        "chars_per_injection": statistics.fmean(r.get("chars", 0) for r in injected) if injected else 0.0,
        "query_mrr": _mrr(rows, "query_ranking"),
        "bm25_mrr": _mrr(rows, "bm25_ranking"),
        "query_first": len(query_first),
        "hook_keeps_query_first": _share(query_first, lambda r: r["answer"] in r["items"]) if query_first else None,
    }


def _off(rows: list[dict]) -> dict:
    return {
        "prompts": len(rows),
        "injected": _share(rows, lambda r: r["items"]),
        "items": sum(len(r["items"]) for r in rows),
        "grounded_or_ambiguous": _share(rows, lambda r: r["verdict"] in ("grounded", "ambiguous")),
        "grounded": _share(rows, lambda r: r["verdict"] == "grounded"),
        "ambiguous": _share(rows, lambda r: r["verdict"] == "ambiguous"),
        "chars_per_injection": statistics.fmean(r.get("chars", 0) for r in rows if r["items"])
        if any(r["items"] for r in rows) else 0.0,
    }


def curve(results: dict, split: str) -> list[tuple[float, float, float]]:
    """(threshold, coverage, risk) at every distinct confidence, highest threshold first."""
    rows = [r for rs in results["stores"].values() for r in rs if r["split"] == split and r["confidence"] is not None]
    on_total = sum(1 for r in rows if r["kind"] == "on")
    if not rows or not on_total:
        return []
    points = []
    for t in sorted({r["confidence"] for r in rows}, reverse=True):
        answered = [r for r in rows if r["confidence"] >= t]
        wrong = sum(1 for r in answered if r["kind"] == "off" or r["best"] != r["answer"])
        covered = sum(1 for r in answered if r["kind"] == "on")
        points.append((t, covered / on_total, wrong / len(answered)))
    return points


# ------------------------------------------------------------------------------ fitting and choosing


def _hook_rows(results: dict, split: str) -> list[dict]:
    return [r for rows in results["stores"].values() for r in rows if r["split"] == split and "hook_hits" in r]


def fit_support(results: dict, split: str = "tuning") -> tuple[float, float, float, float]:
    """The gate's support weights (coverage, title coverage, unknown share, intercept), fitted by logistic
    regression on ``split``: does the prompt's best hit (best coverage, best title coverage, from the
    hook's own search) belong to an on-topic prompt or an off-topic one."""
    import numpy as np

    rows = _hook_rows(results, split)
    x = np.array([[max((h["coverage"] for h in r["hook_hits"]), default=0.0),
                   max((h["title_coverage"] for h in r["hook_hits"]), default=0.0),
                   r["hook_unknown_share"] or 0.0, 1.0] for r in rows])
    y = np.array([1.0 if r["kind"] == "on" else 0.0 for r in rows])
    w = np.zeros(4)
    for _ in range(50):  # Newton's method, a little L2 to keep it finite
        p = 1 / (1 + np.exp(-x @ w))
        w -= np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + 1e-2 * np.eye(4), x.T @ (p - y) + 1e-2 * w)
    return tuple(round(float(v), 2) for v in w)


def simulate(results: dict, split: str, weights, threshold: float, item_threshold: float, max_items: int = 3) -> dict:
    """The prompt hook's figures had the gate these weights and thresholds: the recorded hook searches
    run through the product's own item choice (``hooks.prompt.chosen_items``)."""
    import math

    from autology_mcp.hooks.prompt import chosen_items

    a, b, u, c = weights
    off = on = off_injected = on_injected = governing = others = 0
    for r in _hook_rows(results, split):
        hits = [{"kind": h["kind"], "score": h["score"], "key": h["key"], "components": {
            "support": 1 / (1 + math.exp(-(a * h["coverage"] + b * h["title_coverage"] + u * (r["hook_unknown_share"] or 0) + c)))}}
            for h in r["hook_hits"]]
        grounded = max((h["components"]["support"] for h in hits), default=0.0) >= threshold
        keys = [h["key"] for h in chosen_items(hits, item_threshold, max_items, threshold)] if grounded else []
        if r["kind"] == "off":
            off += 1
            off_injected += bool(keys)
        else:
            on += 1
            on_injected += bool(keys)
            governing += r["answer"] in keys
            others += sum(1 for k in keys if k != r["answer"])
    return {"off_injected": off_injected / off if off else 0.0, "governing_injected": governing / on if on else 0.0,
            "others_per_injection": others / on_injected if on_injected else 0.0}


def verdict_point(results: dict, split: str) -> tuple[float, float]:
    """(coverage, risk) of a checkout's verdicts as they are: for one that reports no confidence."""
    rows = [r for rs in results["stores"].values() for r in rs if r["split"] == split]
    answered = [r for r in rows if r["verdict"] in ("grounded", "ambiguous")]
    on = [r for r in rows if r["kind"] == "on"]
    wrong = sum(1 for r in answered if r["kind"] == "off" or r["best"] != r["answer"])
    return (sum(1 for r in answered if r["kind"] == "on") / len(on) if on else 0.0,
            wrong / len(answered) if answered else 0.0)


def svg_curve(curves: dict[str, list[tuple[float, float, float]]], marks: dict[str, float], path: Path,
              baselines: dict[str, tuple[float, float]] | None = None) -> None:
    """The risk-coverage curves as a small SVG (no plotting library): coverage across, risk up; a
    circle on each curve at its ``marks`` threshold, and a square at each of ``baselines``."""
    w, h, pad = 560, 360, 48
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
             f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">coverage (on-topic prompts answered grounded)</text>',
             f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">risk (grounded answers wrong or off-topic)</text>']

    def xy(cov: float, risk: float) -> tuple[float, float]:
        return pad + cov * (w - 2 * pad), h - pad - risk * (h - 2 * pad)

    for i in range(0, 11, 2):
        x, _ = xy(i / 10, 0)
        _, y = xy(0, i / 10)
        parts.append(f'<text x="{x}" y="{h - pad + 16}" text-anchor="middle">{i / 10:.1f}</text>')
        parts.append(f'<text x="{pad - 6}" y="{y + 4}" text-anchor="end">{i / 10:.1f}</text>')
    for n, (label, points) in enumerate(curves.items()):
        colour = colours[n % len(colours)]
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(c, r) for _, c, r in points))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
        parts.append(f'<text x="{w - pad - 4}" y="{pad + 16 * n}" text-anchor="end" fill="{colour}">{label}</text>')
        if label in marks:
            chosen = min(points, key=lambda p: abs(p[0] - marks[label]))
            x, y = xy(chosen[1], chosen[2])
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="none" stroke="black" stroke-width="2"/>')
    for label, (cov, risk) in (baselines or {}).items():
        x, y = xy(cov, risk)
        parts.append(f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="black"/>')
        parts.append(f'<text x="{x - 8:.1f}" y="{y - 8:.1f}" text-anchor="end">{label}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def report(runs: dict[str, dict], split: str) -> None:
    labels = list(runs)
    figs = {label: figures(runs[label], split) for label in labels}
    print(f"\n## {split}")
    print("\noff-topic prompts: the hook injects / search says grounded or ambiguous")
    print(f"{'store':<10} {'prompts':>7} " + " ".join(f"{label:>30}" for label in labels))
    for store in [*runs[labels[0]]["stores"], "all"]:
        cells = [f"{_pct(figs[lb]['off'][store]['injected']):>9} ({figs[lb]['off'][store]['items']:>3} items) / "
                 f"{_pct(figs[lb]['off'][store]['grounded_or_ambiguous']):>7}" for lb in labels]
        print(f"{store:<10} {figs[labels[0]]['off'][store]['prompts']:>7} " + " ".join(f"{c:>30}" for c in cells))
    print("\non-topic prompts: injected / governing record injected / other items per injection / "
          "search grounded / best hit governing")
    for store in [*runs[labels[0]]["stores"], "all"]:
        print(f"{store} ({figs[labels[0]]['on'][store]['prompts']} prompts)")
        for lb in labels:
            f = figs[lb]["on"][store]
            print(f"    {lb:<22} {_pct(f['injected']):>7} / {_pct(f['governing_injected']):>7} / "
                  f"{f['others_per_injection']:.2f} ({f['items_per_injection']:.2f} items) / {_pct(f['grounded']):>7} / "
                  f"{_pct(f['best_is_governing']):>7}")
    print("\non-topic, the records a block names by title and id only: governing record with text or named / "
          "records named per injection")
    for store in [*runs[labels[0]]["stores"], "all"]:
        print(f"{store}: " + ", ".join(f"{lb} {_pct(figs[lb]['on'][store]['governing_named'])} / "
                                       f"{figs[lb]['on'][store]['named_per_injection']:.2f}" for lb in labels))
    print("\non-topic records: autology_query MRR@10 / plain BM25 MRR@10 / prompts where autology_query's first "
          "is the governing record: the hook injects it / characters per injection")
    for store in [*runs[labels[0]]["stores"], "all"]:
        print(f"{store}")
        for lb in labels:
            f = figs[lb]["on"][store]
            q, b, k = f["query_mrr"], f["bm25_mrr"], f["hook_keeps_query_first"]
            print(f"    {lb:<22} {q if q is None else f'{q:.3f}'} / {b if b is None else f'{b:.3f}'} / "
                  f"{f['query_first']}: {'-' if k is None else _pct(k)} / {f['chars_per_injection']:.0f}")
    print("\nlatency p50 (in process): hook / search ms: " +
          ", ".join(f"{lb} {figs[lb]['hook_ms_p50']:.1f} / {figs[lb]['search_ms_p50']:.1f}" for lb in labels))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="a checkout of the code to compare with (e.g. main at 5f378d6); repeat for several")
    parser.add_argument("--checkout", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--label", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rebuild", action="store_true", help="build the stores again even when they exist")
    parser.add_argument("--reuse", action="store_true", help="report from the results of the last run, measure nothing")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--svg", type=Path, help="write the held-out risk-coverage curve here")
    parser.add_argument("--semantic", type=Path, metavar="MODEL_DIR",
                        help="turn semantic recall on in every store with this model folder (autology semantic enable --path)")
    parser.add_argument("--fit", action="store_true",
                        help="fit the gate's support weights and sweep its thresholds on the tuning part (this checkout's run)")
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    checkouts = {}
    for against in args.against:
        checkouts[f"{against.name}@{_head(against)}"] = against
    checkouts[f"this@{_head(args.checkout)}"] = args.checkout
    load = [os.getloadavg()]
    runs = {}
    for label, checkout in checkouts.items():
        out = args.workdir / f"{label.split('@')[0]}.json"
        if not args.reuse:
            print(f"# {label}: measuring", file=sys.stderr)
            env = {**os.environ, "PYTHONPATH": str(checkout)}
            subprocess.run([sys.executable, __file__, "--worker", "--label", label.split("@")[0], "--mirrors",
                            str(args.mirrors), "--workdir", str(args.workdir), "--out", str(out)]
                           + (["--rebuild"] if args.rebuild else [])
                           + (["--semantic", str(args.semantic)] if args.semantic else []), env=env, check=True)
        runs[label] = json.loads(out.read_text())
    load.append(os.getloadavg())
    print(f"# {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}; load "
          + " -> ".join(" ".join(f"{x:.2f}" for x in avg) for avg in load))
    if args.fit:
        return fit_and_sweep(runs[list(runs)[-1]])
    for split in ("tuning", "held-out"):
        report(runs, split)
    curves = {}
    for label, results in runs.items():
        for split in ("tuning", "held-out"):
            points = curve(results, split)
            if points:
                curves[f"{label} {split}"] = points
    for name, points in curves.items():
        print(f"\ncurve {name}: threshold coverage risk")
        step = max(1, len(points) // 20)
        for t, c, r in points[::step]:
            print(f"    {t:.3f} {c:.3f} {r:.3f}")
    if args.svg and curves:
        from autology_mcp.retrieval.config import RetrievalConfig

        baselines = {f"{label} held-out": verdict_point(results, "held-out") for label, results in runs.items()
                     if not curve(results, "held-out")}
        svg_curve(curves, {name: RetrievalConfig().gate_threshold for name in curves}, args.svg, baselines)
    if args.json:
        args.json.write_text(json.dumps({label: {s: figures(r, s) for s in ("tuning", "held-out")}
                                         for label, r in runs.items()}, indent=1))
    return 0


def fit_and_sweep(results: dict) -> int:
    """The weights fitted on the tuning part, and the hook's figures at each pair of thresholds there."""
    weights = fit_support(results)
    print(f"support weights fitted on the tuning part (coverage, title coverage, unknown share, intercept): {weights}")
    print("threshold item_threshold: off-topic injected / governing injected / other items per injection (tuning)")
    for threshold in (0.15, 0.2, 0.25, 0.27, 0.3, 0.35, 0.4, 0.5):
        for item in (0.05, 0.08, 0.1, 0.12, 0.15, 0.2):
            if item > threshold:
                continue
            f = simulate(results, "tuning", weights, threshold, item)
            print(f"  {threshold:.2f} {item:.2f}: {_pct(f['off_injected']):>7} / {_pct(f['governing_injected']):>7} / "
                  f"{f['others_per_injection']:.2f}")
    return 0


def _head(checkout: Path) -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
