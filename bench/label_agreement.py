"""How far two labellers of a staleness replay agree, and a run of the product against each.

Issue 38 asks for precision and recall >= 0.95 against the replays' labels. A second labeller, given the
nodes, the window's commits and the cells to label but neither the labels nor any flag (the brief is
``data/staleness_replay/second_labels/BRIEF.md``), labelled some replays again; their labels are
``data/staleness_replay/second_labels/<repo>.json``. This prints, per replay, the second labels scored as
if they were a rule against the first (precision, recall, agreement, Cohen's kappa), on the full grid of
node-steps the harness scores (a step without an entry keeps the judgement before it) and on the cells
the labellers wrote. With ``--run <repo>=<json of bench/staleness_replay.py>``, it scores that run against
both labellings.

    python bench/label_agreement.py
    python bench/label_agreement.py --run rich=/tmp/replay-rich.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from staleness_replay import DATA, expand_labels

SECOND = DATA / "second_labels"


def score(pairs: list[tuple[bool, bool]]) -> dict:
    """(reference, other) pairs -> the other scored against the reference."""
    tp = sum(a and b for a, b in pairs)
    fp = sum(b and not a for a, b in pairs)
    fn = sum(a and not b for a, b in pairs)
    tn = sum(not a and not b for a, b in pairs)
    n = len(pairs)
    agree = (tp + tn) / n if n else 1.0
    chance = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n) if n else 0.0
    return {"cells": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
            "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
            "agreement": round(agree, 3), "kappa": round((agree - chance) / (1 - chance), 3) if chance < 1 else 1.0}


def grids(repo: str) -> tuple[dict, dict, set]:
    """(window, node, step) -> stale, by the first and by the second labeller; and the cells both wrote."""
    data = json.loads((DATA / f"{repo}.json").read_text())
    second = json.loads((SECOND / f"{repo}.json").read_text())
    first_grid, second_grid, written = {}, {}, set()
    for w in data["windows"]:
        other = dict(w, labels=second[w["name"]])
        for grid, window in ((first_grid, w), (second_grid, other)):
            for key, row in expand_labels(window).items():
                for i, label in enumerate(row):
                    grid[(w["name"], key, i + 1)] = label["stale"]
        for key, entries in w["labels"].items():
            for e in entries:
                written.add((w["name"], key, next(i + 1 for i, s in enumerate(w["steps"]) if s.startswith(e["step"]))))
    return first_grid, second_grid, written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", default=[], help="<repo>=<json written by staleness_replay.py --json>")
    args = p.parse_args(argv)
    runs = dict(r.split("=", 1) for r in args.run)
    print(f"{'replay':<12} {'cells':>5}  second labeller against the first: precision recall agreement kappa"
          "  (on the cells both wrote)")
    pooled: list[tuple[bool, bool]] = []
    for path in sorted(SECOND.glob("*.json")):
        repo = path.stem
        first, second, written = grids(repo)
        keys = sorted(first)
        pooled += [(first[k], second[k]) for k in keys]
        g = score([(first[k], second[k]) for k in keys])
        w = score([(first[k], second[k]) for k in keys if k in written])
        print(f"{repo:<12} {g['cells']:>5}  {g['precision']:.3f} {g['recall']:.3f} {g['agreement']:.3f} {g['kappa']:.3f}"
              f"  ({w['cells']} cells: {w['precision']:.3f} {w['recall']:.3f} {w['agreement']:.3f} {w['kappa']:.3f})")
        if repo in runs:
            run = json.loads(Path(runs[repo]).read_text())["repos"][repo]
            flagged = {(c["window"], c["node"], c["step"]): c["flagged"] for w_ in run["windows"] for c in w_["cells"]}
            for name, grid in (("first", first), ("second", second)):
                s = score([(grid[k], flagged[k]) for k in keys])
                print(f"{'':<12} {'':>5}  the run against the {name} labeller: precision {s['precision']:.3f} "
                      f"recall {s['recall']:.3f} (TP {s['tp']} FP {s['fp']} FN {s['fn']} TN {s['tn']})")
    a = score(pooled)
    print(f"{'all':<12} {a['cells']:>5}  {a['precision']:.3f} {a['recall']:.3f} {a['agreement']:.3f} {a['kappa']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
