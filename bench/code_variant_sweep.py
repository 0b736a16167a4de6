"""Several ranking settings scored over one pass of incremental builds (issue 15's tuning harness).

``bench/unified_code_eval.py`` measures one configuration and its baselines; trying ten settings
with it costs ten passes of 150 checkouts and builds. This script checks each commit out and builds
the index once, then runs unified search (scope=code, as unified_code_eval.py) once per variant.
A variant is a name and the text of a ``.autology/config.toml`` (``[retrieval]`` and ``[index]``
query settings: channel weights, index weights, blend, ...; settings that change what the index
stores would need a rebuild per variant and are not for this script). The empty text is the
defaults.

Rows, in the source view (non-source files taken out, as unified_code_eval.py's ``source_view``):
each variant, whole-file BM25 (``bm25_files``, the best baseline on most repositories), and with
``--fuse-file-bm25`` the defaults' file ranking fused by reciprocal rank with whole-file BM25's at a
few weights (``fuse w=.. k=..``: a file's score ``1/(k+rank) + w/(k+rank_bm25)``), the cheap test of
a file-level BM25 channel. MRR@10 for the tuning part (two commits of three, oldest first) and the
held-out part (every third), R@10 over all. Choose on the tuning column only.

    cat > /tmp/variants.json <<'EOF'
    {"defaults": "", "paths 0.25": "[retrieval]\\nchannel_weights = { paths = 0.25 }\\n"}
    EOF
    python bench/code_variant_sweep.py /work/.mirror/psf+requests/repo /tmp/variants.json --workdir /tmp/sweep-requests
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_eval import bm25_baselines, git, indexed_files, is_source, mean, metrics, prepare_history  # noqa: E402
from unified_code_eval import ranked_unified_files  # noqa: E402

import autology_mcp.common.config as project_config  # noqa: E402
from autology_mcp.code import service  # noqa: E402

FUSION_GRID = [(w, k) for w in (0.25, 0.5, 1.0) for k in (1, 3, 10, 60)]


def fuse(ours: list[str], theirs: list[str], w: float, k: int) -> list[str]:
    score: dict[str, float] = {}
    for rank, path in enumerate(ours, 1):
        score[path] = score.get(path, 0.0) + 1 / (k + rank)
    for rank, path in enumerate(theirs, 1):
        score[path] = score.get(path, 0.0) + w / (k + rank)
    return sorted(score, key=lambda p: (-score[p], p))


def write_config(path: Path, text: str) -> None:
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    project_config._cache.clear()  # keyed by the file's stat: two quick writes may share one


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git repository (bare mirror or clone); it is not modified")
    ap.add_argument("variants", type=Path, help='a JSON object: variant name -> config.toml text ("" = defaults)')
    ap.add_argument("--workdir", type=Path, help="work tree to check commits out in (default /tmp/autology-eval-<name>)")
    ap.add_argument("--commits", type=int, default=150)
    ap.add_argument("--fuse-file-bm25", action="store_true", help="also fuse the defaults' ranking with whole-file BM25")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()
    variants: dict[str, str] = json.loads(args.variants.read_text(encoding="utf-8"))
    name, work, _head, commits = prepare_history(args.repo, args.workdir, args.commits)
    config = work / ".autology" / "config.toml"
    rows: dict[str, list[dict]] = {v: [] for v in variants} | {"bm25_files": []}
    if args.fuse_file_bm25:
        rows |= {f"fuse w={w} k={k}": [] for w, k in FUSION_GRID}
    try:
        for c in reversed(commits):  # oldest first, so each build is incremental on the previous one
            git(work, "checkout", "-q", "-f", "--detach", c["parent"])
            git(work, "clean", "-q", "-f", "-d", "-x", "-e", ".autology")
            write_config(config, "")
            service.build_index(work)
            for variant, text in variants.items():
                write_config(config, text)
                ranked, _ = ranked_unified_files(work, c["subject"], ["code"])
                rows[variant].append(metrics([p for p in ranked if is_source(p)], c["relevant"]))
            by_files = [p for p in bm25_baselines(work, indexed_files(work), c["subject"])["bm25_files"] if is_source(p)]
            rows["bm25_files"].append(metrics(by_files, c["relevant"]))
            if args.fuse_file_bm25:
                write_config(config, "")
                ours = [p for p in ranked_unified_files(work, c["subject"], ["code"])[0] if is_source(p)]
                for w, k in FUSION_GRID:
                    rows[f"fuse w={w} k={k}"].append(metrics(fuse(ours, by_files, w, k), c["relevant"]))
    finally:
        write_config(config, "")
    results = {}
    print(f"{'':28s} {'tuning':>7s} {'held':>7s} {'R@10':>7s}   MRR@10 (tuning, held out), R@10 (all); source view")
    for variant, r in rows.items():
        tuning = mean([x for i, x in enumerate(r) if i % 3 != 2])["mrr@10"]
        held = mean([x for i, x in enumerate(r) if i % 3 == 2])["mrr@10"]
        results[variant] = {"tuning_mrr@10": tuning, "held_out_mrr@10": held, "recall@10": mean(r)["recall@10"]}
        print(f"{variant[:28]:28s} {tuning:7.3f} {held:7.3f} {mean(r)['recall@10']:7.3f}")
    if args.json:
        args.json.write_text(json.dumps({"repo": name, "commits": len(commits), "variants": variants,
                                         "results": results}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
