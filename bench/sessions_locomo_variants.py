"""Ways to rank session memory with semantic recall on, tried on LoCoMo's tuning part (issue 40, part 7).

Each variant runs through ``search_sessions`` itself, with one piece of the dense channel
(:mod:`autology_mcp.sessions.semantic`) replaced for the run, so the lexical side, the candidates and the
judging are the product's and ``bench/sessions_locomo_eval.py``'s (whose helpers this reuses). The
``product`` row is the product unchanged. Variants:

- ``weights a,d``: the product's fusion at other weights (best turn, mean of turns);
- ``second turn w``: the chunk's second best turn added at weight w (several turns of one chunk answering);
- ``edge turns w``: the best of the two turns just outside the chunk (the previous chunk's last, the next
  one's first) added at weight w: multi-hop expansion over neighbouring turns;
- ``session w``: the best turn of the chunk's whole session added at weight w (a session about the
  question lifts all its chunks);
- ``confidence p``: both dense weights times (z / median z)^p, z being how far the query's nearest turn
  stands above the memory's mean in standard deviations (trust the model more when it is sure);
- ``feedback b,k``: the query vector plus b times the mean of its k nearest turns (pseudo-relevance
  feedback: a second hop from what the first found);
- ``one per session n``: the product's list, reordered so that within each window of n hits a session
  appears once (evidence of multi-hop questions lies in several sessions);
- ``turns unlabelled``: each turn embedded without its ``User: ``/``Claude: `` label;
- ``turns in context``: each turn embedded after the turn before it (an answer with its question).

The last two embed the tuning part's turns again (about a minute each on 2 cores); the vectors kept by
``--keep-vectors`` are put back after them.

    python bench/sessions_locomo_variants.py DATA MODEL_DIR --keep-vectors /tmp/vectors

Tuning part only: the held-out part is for ``sessions_locomo_eval.py``, once, with what is chosen here.
"""

from __future__ import annotations

import argparse
import re
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sessions_locomo_eval import TOP, TUNING, ingest_conversation, judge, summarise  # noqa: E402

from autology_mcp.semantic.runtime import enable  # noqa: E402
from autology_mcp.sessions import semantic  # noqa: E402
from autology_mcp.sessions.search import SessionHit, search_sessions  # noqa: E402

PRODUCT_FUSED = semantic.DenseScores.fused
PRODUCT_DENSE = semantic.dense_scores


def _extra_fused(feature: Callable[[semantic.DenseScores, str, int, int], float | None], weight: float):
    """The product's fusion plus ``weight`` times ``feature`` (above the memory's mean, divided by its best)."""

    def fused(self: semantic.DenseScores, chunks: dict[int, tuple[str, int, int]]):
        base, scale = PRODUCT_FUSED(self, chunks)
        if not base:
            return base, scale
        floor = float(self.sims.mean())
        values = {rowid: feature(self, *chunks[rowid]) for rowid in base}
        best = max(max((v for v in values.values() if v is not None), default=floor) - floor, 1e-9)
        return ({rowid: s + weight * max((values[rowid] if values[rowid] is not None else floor) - floor, 0.0) / best
                 for rowid, s in base.items()}, scale + weight)

    return fused


def _sims(dense: semantic.DenseScores, session: str, turns) -> list[float]:
    return [float(dense.sims[dense.row[k]]) for k in (f"{session}:{n}" for n in turns) if k in dense.row]


def second_turn(dense, session, start, end):
    values = sorted(_sims(dense, session, range(start, end + 1)), reverse=True)
    return values[1] if len(values) > 1 else None


def edge_turns(dense, session, start, end):
    return max(_sims(dense, session, (start - 1, end + 1)), default=None)


def session_best(dense, session, start, end):
    return max((float(dense.sims[i]) for k, i in dense.row.items() if k.rsplit(":", 1)[0] == session), default=None)


def _confidence(p: float, median: float):
    def fused(self: semantic.DenseScores, chunks):
        sims = self.sims
        z = float((sims.max() - sims.mean()) / (sims.std() or 1.0)) if len(sims) else median
        a, d = semantic.WEIGHTS
        factor = (z / median) ** p
        semantic.WEIGHTS = (a * factor, d * factor)
        try:
            return PRODUCT_FUSED(self, chunks)
        finally:
            semantic.WEIGHTS = (a, d)

    return fused


def _feedback(beta: float, k: int):
    def dense_scores(root: Path, query: str):
        found = PRODUCT_DENSE(root, query)
        if found is None or not len(found.sims):
            return found
        near = np.argsort(-found.sims, kind="stable")[:k]
        vector = found.query + beta * found.matrix[near].mean(axis=0)
        return semantic.DenseScores(list(found.row), found.matrix, vector / np.linalg.norm(vector))

    return dense_scores


def one_per_session(hits: list[SessionHit], window: int) -> list[SessionHit]:
    rest, out = list(hits), []
    while rest:
        recent = {h.session_id for h in out[len(out) - len(out) % window:]}
        pick = next((i for i, h in enumerate(rest[:window]) if h.session_id not in recent), 0)
        out.append(rest.pop(pick))
    return out


_LABEL = re.compile(r"^[A-Z][a-z]+: ")


def unlabelled(texts: dict[str, str]) -> dict[str, str]:
    return {key: _LABEL.sub("", text, count=1) for key, text in texts.items()}


def in_context(texts: dict[str, str]) -> dict[str, str]:
    out = {}
    for key, text in texts.items():
        session, n = key.rsplit(":", 1)
        before = texts.get(f"{session}:{int(n) - 1}")
        out[key] = f"{before}\n{text}" if before else text
    return out


def variants(median_z: float) -> dict[str, dict]:
    """name: what to replace for the run (``fused``, ``dense``, ``weights``, ``after``)."""
    out: dict[str, dict] = {"product": {}}
    for a, d in ((0.3, 0.2), (0.5, 0.2), (0.4, 0.1), (0.4, 0.3), (0.6, 0.3)):
        out[f"weights {a:g},{d:g}"] = {"weights": (a, d)}
    for w in (0.1, 0.2):
        out[f"second turn {w:g}"] = {"fused": _extra_fused(second_turn, w)}
        out[f"edge turns {w:g}"] = {"fused": _extra_fused(edge_turns, w)}
        out[f"session {w:g}"] = {"fused": _extra_fused(session_best, w)}
    for p in (1.0, 2.0):
        out[f"confidence {p:g}"] = {"fused": _confidence(p, median_z)}
    for beta, k in ((0.2, 3), (0.5, 10)):
        out[f"feedback {beta:g},{k}"] = {"dense": _feedback(beta, k)}
    for n in (2, 3):
        out[f"one per session {n}"] = {"after": lambda hits, n=n: one_per_session(hits, n)}
    out["turns unlabelled"] = {"texts": unlabelled}
    out["turns in context"] = {"texts": in_context}
    return out


PRODUCT_TEXTS = semantic.turn_texts


def run_variant(spec: dict, stores: list[tuple[Path, dict, dict]]) -> list[tuple[int, dict]]:
    if "texts" in spec:  # embed the turns as the variant writes them, then put the product's vectors back
        saved = []
        semantic.turn_texts = lambda root: spec["texts"](PRODUCT_TEXTS(root))
        try:
            for root, _, _ in stores:
                cache = root / ".autology" / "cache" / "semantic.sqlite"
                sqlite3.connect(cache).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
                shutil.copyfile(cache, cache.with_suffix(".product"))
                saved.append(cache)
                semantic.sync_turn_vectors(root)
            return run_variant({k: v for k, v in spec.items() if k != "texts"}, stores)
        finally:
            semantic.turn_texts = PRODUCT_TEXTS
            for cache in saved:
                for suffix in ("-wal", "-shm"):
                    cache.with_name(cache.name + suffix).unlink(missing_ok=True)
                shutil.copyfile(cache.with_suffix(".product"), cache)
    weights = semantic.WEIGHTS
    semantic.DenseScores.fused = spec.get("fused", PRODUCT_FUSED)
    semantic.dense_scores = spec.get("dense", PRODUCT_DENSE)
    semantic.WEIGHTS = spec.get("weights", weights)
    try:
        rows = []
        for root, data, turns in stores:
            for qa in data["qa"]:
                evidence = [turns[x] for x in qa.get("evidence", []) if x in turns]
                if qa.get("category") == 5 or not evidence:
                    continue
                hits = search_sessions(root, qa["question"], TOP)
                if "after" in spec:
                    hits = spec["after"](hits)
                rows.append((qa["category"], judge([h.text for h in hits], evidence)))
        return rows
    finally:
        semantic.DenseScores.fused, semantic.dense_scores, semantic.WEIGHTS = PRODUCT_FUSED, PRODUCT_DENSE, weights


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="folder of LoCoMo conversation files (<conv id>.json)")
    ap.add_argument("model", type=Path, help="a local model folder (as for sessions_locomo_eval.py --semantic)")
    ap.add_argument("--keep-vectors", type=Path, help="the folder sessions_locomo_eval.py --keep-vectors uses")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                            text=True).stdout.strip()
    print(f"# LoCoMo tuning part, ranking variants with semantic recall on, at {commit}; {uptime}")
    stores, temps, zs = [], [], []
    try:
        for cid in TUNING:
            data = json.loads((args.data / f"{cid}.json").read_text(encoding="utf-8"))
            root = Path(tempfile.mkdtemp(prefix=f"autology-locomo-{cid}-")) / "project"
            root.mkdir()
            temps.append(root.parent)
            turns, _ = ingest_conversation(cid, data, root)
            enable(root, args.model)
            kept = args.keep_vectors / f"{args.model.name}-{cid}.sqlite" if args.keep_vectors else None
            cache = root / ".autology" / "cache" / "semantic.sqlite"
            if kept and kept.exists():
                cache.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(kept, cache)
            semantic.sync_turn_vectors(root)
            if kept:
                sqlite3.connect(cache).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
                shutil.copyfile(cache, kept)
            for qa in data["qa"]:
                found = PRODUCT_DENSE(root, qa["question"])
                if found is not None and len(found.sims):
                    zs.append(float((found.sims.max() - found.sims.mean()) / (found.sims.std() or 1.0)))
            stores.append((root, data, turns))
        results = {}
        for name, spec in variants(float(np.median(zs))).items():
            summary = summarise([{"rows": {name: run_variant(spec, stores)}}])[name]
            results[name] = summary
            print(f"{name:<22} " + "  ".join(f"{k} {v['recall@5']:.4f}" for k, v in summary.items()), flush=True)
    finally:
        for folder in temps:
            shutil.rmtree(folder, ignore_errors=True)
    end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(end)
    if args.json:
        args.json.write_text(json.dumps({"commit": commit, "uptime_start": uptime, "uptime_end": end,
                                         "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
