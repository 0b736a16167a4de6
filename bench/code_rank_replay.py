"""Variants of unified code search's last steps, replayed offline over captured searches (issue 41).

``bench/code_variant_sweep.py`` runs the whole search once per variant and commit. This script runs it
once per commit (the commits, parents and relevant files of ``bench/unified_code_eval.py``; scope
code, limit 50) and keeps what the steps after the score read: the shortlist's scores and channels,
each chunk's path, the 40 commits the history search ranks best (score, files, date: what unified
search asks for), each candidate file's touches among the 3,000 newest commits, the files most often
changed with the ten best files, the query words each file defines as symbols, the indexed files and
the shortlisted Python test files' texts (captures made before these two were kept get them from the
mirror, ``--mirrors``: the tree at the parent by ``git ls-tree``). The variants below change only what
comes after the score: the history prior's form and weight, co-change, recency, defined names, how a
file's chunks add up, MMR, extra files after the evidence, a matching test file's vote for the file it
tests (bench/test_source_pairs.py). Each is
replayed through the engine's own ``diversify`` in seconds. Three variants that change the channels'
weights are captured as second passes of fusion and score.

``capture`` also records the files the live search listed; ``replay`` first checks that the
defaults, replayed, give exactly those lists (``live lists reproduced``). It prints the tuning
part only (two commits of three, oldest first; every third is held out as in unified_code_eval.py):
source-view MRR@10 per repository, the mean, how many repositories each variant raises and lowers,
and the mean change of the all-files view.

    python bench/code_rank_replay.py capture /work/.mirror/pallets+click/repo --workdir /tmp/rr-click --out /tmp/rr/click.pkl
    python bench/code_rank_replay.py replay /tmp/rr/*.pkl
    python bench/code_rank_replay.py replay /tmp/rr/*.pkl --only "a test"   # the shipped row and the test votes
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_eval import git, indexed_files, is_source, metrics, prepare_history  # noqa: E402
from test_source_pairs import TestSources, test_subject  # noqa: E402
from unified_code_eval import ranked_unified_files  # noqa: E402

from autology_mcp.code import service  # noqa: E402
from autology_mcp.code.config import IndexConfig  # noqa: E402
from autology_mcp.code.query import area_weight, area_weights_for  # noqa: E402
from autology_mcp.common.query_text import without_boilerplate  # noqa: E402
from autology_mcp.common.text import code_query_words, keyword_stem, keyword_terms, name_words  # noqa: E402
from autology_mcp.history.index import HistoryIndex  # noqa: E402
from autology_mcp.retrieval import engine  # noqa: E402
from autology_mcp.retrieval.config import RetrievalConfig  # noqa: E402
from autology_mcp.retrieval.history_prior import file_prior  # noqa: E402
from autology_mcp.retrieval.intent import classify_intent  # noqa: E402

DEPTH = 40  # commits kept per query: the history search's size in unified search (its pool), so ties cut alike
WINDOW = 3000  # newest commits whose files count as touches and co-changes
LIMIT = 50  # unified_code_eval.py's
ALTERNATE_WEIGHTS = {"paths 0.25": {"paths": 0.25}, "paths 1.0": {"paths": 1.0}, "symbols 1.0": {"symbols": 1.0}}


# ---------------------------------------------------------------------------------------------- capture

def _light(cand) -> SimpleNamespace:
    """What diversify reads of a candidate."""
    return SimpleNamespace(kind=cand.kind, via=cand.via, path=cand.path, tree=cand.tree,
                           meta={k: v for k, v in cand.meta.items() if k in ("channels", "graph_parents", "supersedes_chain")})


def _new_search(root: Path, query: str, cfg, weights_override: dict | None = None) -> engine.Search:
    """The Search unified search starts from (engine._search), scope code."""
    intent = classify_intent(query)
    terms = keyword_terms(query)
    weights = intent.channel_weights(cfg.channel_weights) | (weights_override or {})
    return engine.Search(root=root, query=query, scopes={"code"}, limit=LIMIT, detail="normal", store=None, cfg=cfg,
                         module_hint=None, intent=intent, text_query=query, terms=terms,
                         record_query=without_boilerplate(query),
                         term_stems=list(dict.fromkeys(keyword_stem(t) for t in terms)), weights=weights)


def capture_one(root: Path, subject: str) -> dict:
    cfg, index_cfg = engine.project_configs(root)
    query = subject.strip()
    s = _new_search(root, query, cfg)
    engine.run_channels(s, index_cfg)
    engine.fuse(s)
    engine.score(s)
    out = {"query": query, "term_stems": s.term_stems, "shortlist": list(s.shortlist), "scored": copy.deepcopy(s.scored),
           "items": {k: _light(s.pool.items[k]) for k in s.shortlist}}
    index = HistoryIndex(root)
    try:
        hits = index.search(s.record_query, DEPTH)
        marks = ",".join("?" * len(hits))
        when = dict(index.conn.execute(f"SELECT sha, epoch FROM commits WHERE sha IN ({marks})", [h.sha for h in hits]))
        out["commits"] = [(h.score, tuple(h.files), when.get(h.sha, 0)) for h in hits]
        newest = index.conn.execute("SELECT files FROM commits WHERE bot = 0 ORDER BY epoch DESC LIMIT ?", (WINDOW,)).fetchall()
        head = index.conn.execute("SELECT max(epoch) FROM commits").fetchone()[0] or 0
    finally:
        index.close()
    out["head_epoch"] = head
    recent = [files.split("\n") if files else [] for (files,) in newest]
    touched: dict[str, list[int]] = {}
    for i, files in enumerate(recent):
        if len(files) <= 50:  # a sweeping change says nothing about which files go together
            for path in files:
                touched.setdefault(path, []).append(i)
    paths = {it.path for it in out["items"].values() if it.path}
    out["touch"] = {p: touched.get(p, []) for p in paths}  # indexes of the commits (0 the newest) that touched p
    best = file_scores(out)
    out["cochange"] = {}
    for path in sorted(best, key=lambda p: (-best[p], p))[:10]:
        counts: dict[str, int] = {}
        for i in touched.get(path, []):
            for other in recent[i]:
                if other != path:
                    counts[other] = counts.get(other, 0) + 1
        out["cochange"][path] = counts
    out["defines"] = _defined_names(s.code_index[1].db, sorted(paths), code_query_words(query))
    out["alternates"] = {}
    for name, override in ALTERNATE_WEIGHTS.items():
        s2 = _new_search(root, query, cfg, override)
        s2.runs, s2.code_index, s2.file_prior, s2.freshness = s.runs, s.code_index, s.file_prior, s.freshness
        s2.pool.items = dict(s.pool.items)
        engine.fuse(s2)
        engine.score(s2)
        out["alternates"][name] = {"shortlist": list(s2.shortlist), "scored": copy.deepcopy(s2.scored),
                                   "items": {k: _light(s2.pool.items[k]) for k in s2.shortlist}}
    out["live"], _ = ranked_unified_files(root, query, ["code"])
    out["files"] = indexed_files(root)  # the tree as indexed: which source file a test tests
    tests = sorted({it.path for it in out["items"].values() if it.path and it.path.endswith(".py") and test_subject(it.path)})
    out["test_texts"] = {p: (root / p).read_text(errors="replace") for p in tests if (root / p).is_file()}
    return out


def _defined_names(db: Path, paths: list[str], qwords: list[str]) -> dict[str, tuple[float, float]]:
    """Per candidate file, the share of the query's words that are the whole name of a symbol it defines,
    and the share that are one of the words of such a name (``retry`` in ``retry_after``)."""
    if not paths or not qwords:
        return {}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        marks = ",".join("?" * len(paths))
        names: dict[str, set[str]] = {}
        for path, name in conn.execute(f"SELECT path, name FROM symbols WHERE path IN ({marks})", paths):
            names.setdefault(path, set()).add(name)
    finally:
        conn.close()
    words = set(qwords)
    out = {}
    for path, defined in names.items():
        whole = {n.rsplit(".", 1)[-1].lower() for n in defined}
        parts = set().union(*(name_words(n) for n in defined))
        out[path] = (len(words & whole) / len(words), len(words & parts) / len(words))
    return out


def capture(args) -> int:
    name, work, _head, commits = prepare_history(args.repo, args.workdir, args.commits)
    rows = []
    for c in reversed(commits):  # oldest first, so each build is incremental on the previous one
        git(work, "checkout", "-q", "-f", "--detach", c["parent"])
        git(work, "clean", "-q", "-f", "-d", "-x", "-e", ".autology")
        service.build_index(work)
        rows.append(capture_one(work.resolve(), c["subject"]) | {"relevant": c["relevant"], "commit": c["commit"]})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as f:
        pickle.dump({"repo": name, "rows": rows}, f)
    print(f"{name}: {len(rows)} searches captured in {args.out}")
    return 0


# ---------------------------------------------------------------------------------------------- replay

CFG = RetrievalConfig()
AREA_WEIGHTS = IndexConfig().area_weights


def file_scores(row: dict) -> dict[str, float]:
    """Each file's best chunk score (the blend, without the prior)."""
    best: dict[str, float] = {}
    for key, item in row["items"].items():
        if item.path and item.kind in ("code", "doc"):
            best[item.path] = max(best.get(item.path, 0.0), row["scored"][key]["score"])
    return best


def replay_files(row: dict, variant: dict) -> list[str]:
    """The files unified search lists under ``variant``: its rank for every shortlisted chunk, then the engine's
    diversify by that rank (with scope code every hit is a code or doc hit, so order_code's places are all of them)."""
    state = row["alternates"][variant["alternate"]] if variant.get("alternate") else row
    scored = {k: dict(v) for k, v in state["scored"].items()}
    items = dict(state["items"])
    rank = variant.get("rank", prior_rank())(row)
    for key, got in scored.items():
        got["rank"] = round(rank(items[key], got), 4)  # as engine.score rounds it: ties then break by key
    cfg = dataclasses.replace(CFG, mmr_lambda=variant["mmr_lambda"]) if "mmr_lambda" in variant else CFG
    s = SimpleNamespace(pool=SimpleNamespace(items=items), scored=scored, cfg=cfg, shortlist=state["shortlist"],
                        term_stems=row["term_stems"], limit=LIMIT)
    if "file_value" in variant:
        _diversify_with(s, variant["file_value"])
    else:
        engine.diversify(s, by="rank")
    files = list(dict.fromkeys(items[k].path for k in s.order if items[k].kind in ("code", "doc") and items[k].path))
    if variant.get("fill") and files:  # the files the prior names, not listed, after the evidence
        prior = _prior(row, 20)
        weights = area_weights_for(AREA_WEIGHTS, code_query_words(row["query"]))
        extra = sorted((p for p in prior if p not in files), key=lambda p: (-prior[p] * area_weight(p, weights), p))
        files += extra[: max(0, LIMIT - len(files))]
    return files


def _diversify_with(s, file_value) -> None:
    """engine.diversify(by="rank") with a file's relevance ``file_value(its chunks' ranks, best first)`` in place of
    its best chunk's."""
    original = engine.diversify
    values: dict[str, list[float]] = {}
    for key in s.shortlist:
        item = s.pool.items[key]
        if item.kind in ("code", "doc"):
            values.setdefault(item.path, []).append(s.scored[key]["rank"])
    best = {p: max(v) for p, v in values.items()}
    lifted = {p: file_value(sorted(v, reverse=True)) for p, v in values.items()}
    for key in s.shortlist:  # every chunk of a file takes the file's value where it was its best
        item = s.pool.items[key]
        if item.kind in ("code", "doc") and s.scored[key]["rank"] == best[item.path]:
            s.scored[key]["rank"] = lifted[item.path]
    original(s, by="rank")


def _prior(row: dict, depth: int, spread: float = 0.5) -> dict[str, float]:
    return file_prior(((score, files) for score, files, _ in row["commits"]), depth, spread)


def prior_rank(weight: float = 0.3, depth: int = 20, prior=None, extra=None):
    """The shipped rank (score + weight × the history prior), the prior and any extra per-file part replaceable."""
    def make(row):
        got = prior(row) if prior else _prior(row, depth)
        more = extra(row) if extra else {}

        def rank(item, scored):
            if item.kind not in ("code", "doc"):
                return scored["score"]
            return scored["score"] + weight * got.get(item.path, 0.0) + more.get(item.path, 0.0)
        return rank
    return make


def damped(alpha: float, depth: int = 20):
    """Votes divided by the file's touches among the newest 3,000 commits to the power alpha."""
    def prior(row):
        votes = _prior(row, depth)
        if not votes:
            return {}
        damped_votes = {p: v / max(1, len(row["touch"].get(p, []))) ** alpha for p, v in votes.items()}
        top = row["commits"][0][0]
        scale = min(1.0, top) / max(damped_votes.values())
        return {p: v * scale for p, v in damped_votes.items()}
    return prior


def aged(tau_days: float, depth: int = 20):
    """Each commit's vote times 1 / (1 + its age before the newest indexed commit / tau)."""
    def prior(row):
        head = row["head_epoch"]
        kept = [(score / (1 + max(0.0, head - when) / 86400 / tau_days), files) for score, files, when in row["commits"][:depth]]
        votes = file_prior(kept, depth)
        if not votes:
            return {}
        scale = min(1.0, row["commits"][0][0]) / max(votes.values())
        return {p: v * scale for p, v in votes.items()}
    return prior


def relative_cut(share: float, depth: int = 20):
    """Only the commits scoring at least ``share`` of the best commit vote."""
    def prior(row):
        commits = [(score, files) for score, files, _ in row["commits"][:depth] if score > 0 and files]
        if not commits:
            return {}
        return file_prior([c for c in commits if c[0] >= share * commits[0][0]], depth)
    return prior


def co_change(weight: float, top: int = 1):
    """Files changed with the ``top`` best files: weight × P(changed with it) among the newest commits."""
    def extra(row):
        best = file_scores(row)
        out: dict[str, float] = {}
        for path in sorted(best, key=lambda p: (-best[p], p))[:top]:
            n = len(row["touch"].get(path, [])) or 1
            for other, count in row["cochange"].get(path, {}).items():
                out[other] = out.get(other, 0.0) + weight * count / n / top
        return out
    return extra


def recency(weight: float, newest: int):
    """weight × the file's touches among the ``newest`` commits, relative to the most touched candidate."""
    def extra(row):
        counts = {p: sum(1 for i in idx if i < newest) for p, idx in row["touch"].items()}
        most = max(counts.values(), default=0) or 1
        return {p: weight * c / most for p, c in counts.items()}
    return extra


def defines(weight: float, whole: bool = True):
    """weight × the share of the query's words that name (wholly, or as one word of the name) a symbol the file defines."""
    def extra(row):
        return {p: weight * (shares[0] if whole else shares[1]) for p, shares in row["defines"].items()}
    return extra


def _test_sources(row: dict) -> TestSources:
    if "_test_sources" not in row:
        row["_test_sources"] = TestSources(row["files"])
    return row["_test_sources"]


def test_votes(weight: float, mode: str = "add", top: int | None = None, min_keyword: float = 0.0,
               by_keyword: bool = False, strong: float = 0.0, imports: bool = False):
    """A matching test file votes for the source file it tests (bench/test_source_pairs.py). A test's value is
    its best shortlisted chunk's score; ``add``: the counterpart gains ``weight`` × it; ``floor``: the
    counterpart rises to at least ``weight`` × it (by the difference to its own best, when positive). Options:
    ``top`` only the best ``top`` tests that have a counterpart vote; ``min_keyword`` only chunks holding more
    than that share of the query's words count; ``by_keyword`` the value is also times that share; ``strong``
    only tests scoring at least that share of the best source file's score vote; ``imports`` a Python test
    with no counterpart by name votes for the one project module it imports, if one."""
    def extra(row):
        sources = _test_sources(row)
        own = file_scores(row)
        best_source = max((v for p, v in own.items() if not test_subject(p)), default=0.0)
        tests: dict[str, float] = {}
        for key, item in row["items"].items():
            got = row["scored"][key]
            if item.kind == "code" and item.path and got["keyword"] > min_keyword and test_subject(item.path):
                value = got["score"] * (got["keyword"] if by_keyword else 1.0)
                tests[item.path] = max(tests.get(item.path, 0.0), value)
        targets: dict[str, str] = {}
        for test in tests:
            target = sources.source_of(test)
            if not target and imports and test in row.get("test_texts", {}):
                found = sources.imported(row["test_texts"][test])
                target = found[0] if len(found) == 1 else None
            if target and tests[test] >= strong * best_source:
                targets[test] = target
        votes: dict[str, float] = {}
        for test in sorted(targets, key=lambda p: (-tests[p], p))[:top]:
            votes[targets[test]] = max(votes.get(targets[test], 0.0), tests[test])
        if mode == "add":
            return {p: weight * v for p, v in votes.items()}
        return {p: max(0.0, weight * v - own.get(p, 0.0)) for p, v in votes.items()}
    return extra


def spread_scaled(weight: float, n: int = 10):
    """The prior times the spread of the files' scores (the best file's minus the n-th's)."""
    def make(row):
        prior = _prior(row, 20)
        best = sorted(file_scores(row).values(), reverse=True)
        spread = best[0] - best[min(n, len(best)) - 1] if best else 0.0

        def rank(item, scored):
            if item.kind not in ("code", "doc"):
                return scored["score"]
            return scored["score"] + weight * spread * prior.get(item.path, 0.0)
        return rank
    return make


def fused_ranks(weight: float, k: int):
    """Reciprocal-rank fusion of the files' score order and the prior's order in place of the sum."""
    def make(row):
        prior = _prior(row, 20)
        best = file_scores(row)
        by_score = {p: i for i, p in enumerate(sorted(best, key=lambda p: (-best[p], p)), 1)}
        by_prior = {p: i for i, p in enumerate([p for p in sorted(prior, key=lambda p: (-prior[p], p)) if p in best], 1)}

        def rank(item, scored):
            if item.kind not in ("code", "doc"):
                return scored["score"]
            fused = 1 / (k + by_score[item.path]) + (weight / (k + by_prior[item.path]) if item.path in by_prior else 0.0)
            return fused + 1e-4 * scored["score"]  # a file's chunks keep their order
        return rank
    return make


VARIANTS = {
    "shipped (prior 0.3, 20 commits)": {},
    "prior off": {"rank": prior_rank(weight=0.0)},
    "prior 0.2": {"rank": prior_rank(weight=0.2)},
    "prior 0.5": {"rank": prior_rank(weight=0.5)},
    "prior 0.3, 10 commits": {"rank": prior_rank(depth=10)},
    "prior 0.3, 40 commits": {"rank": prior_rank(depth=40)},
    "prior 0.5, 40 commits": {"rank": prior_rank(weight=0.5, depth=40)},
    "only commits >= 0.5 of the best": {"rank": prior_rank(prior=relative_cut(0.5))},
    "only commits >= 0.3 of the best, 0.5": {"rank": prior_rank(weight=0.5, prior=relative_cut(0.3))},
    "votes / touches^0.35, 0.5": {"rank": prior_rank(weight=0.5, prior=damped(0.35))},
    "votes aged, tau 180 days": {"rank": prior_rank(prior=aged(180))},
    "votes aged, tau 30 days": {"rank": prior_rank(prior=aged(30))},
    "prior x score spread (2.0, 10th)": {"rank": spread_scaled(2.0)},
    "rank fusion with the prior (0.5, k 2)": {"rank": fused_ranks(0.5, 2)},
    "+ co-change with the best file 0.05": {"rank": prior_rank(extra=co_change(0.05))},
    "+ co-change with the best 3 files 0.1": {"rank": prior_rank(extra=co_change(0.1, 3))},
    "+ recency 0.05 (newest 500)": {"rank": prior_rank(extra=recency(0.05, 500))},
    "+ defines a query word (whole name) 0.05": {"rank": prior_rank(extra=defines(0.05))},
    "+ defines a query word (whole name) 0.1": {"rank": prior_rank(extra=defines(0.1))},
    "+ a query word in its symbol names 0.05": {"rank": prior_rank(extra=defines(0.05, whole=False))},
    "file = best + 0.05 x next 4 chunks": {"file_value": lambda v: v[0] + 0.05 * sum(v[1:5])},
    "file = mean of its best 2 chunks": {"file_value": lambda v: (v[0] + (v[1] if len(v) > 1 else 0.0)) / 2},
    "MMR off (lambda 1.0)": {"mmr_lambda": 1.0},
    "paths channel 0.25": {"alternate": "paths 0.25"},
    "paths channel 1.0": {"alternate": "paths 1.0"},
    "symbols channel 1.0": {"alternate": "symbols 1.0"},
    "prior's files after the evidence": {"fill": True},
    **{f"+ a test votes for its file, {w}": {"rank": prior_rank(extra=test_votes(w))} for w in (0.02, 0.03, 0.05, 0.1, 0.2, 0.5)},
    **{f"+ the best test votes for its file, {w}": {"rank": prior_rank(extra=test_votes(w, top=1))} for w in (0.02, 0.03, 0.05, 0.1)},
    "+ a test votes, 0.03, from chunks with > half the words": {"rank": prior_rank(extra=test_votes(0.03, min_keyword=0.5))},
    "+ a test votes, 0.05 x its chunk's word share": {"rank": prior_rank(extra=test_votes(0.05, by_keyword=True))},
    "+ a test votes, 0.05, if >= 0.9 x the best source": {"rank": prior_rank(extra=test_votes(0.05, strong=0.9))},
    "+ a test votes, 0.03, or a Python test by its import": {"rank": prior_rank(extra=test_votes(0.03, imports=True))},
    **{f"+ a test lifts its file to {w} x its score": {"rank": prior_rank(extra=test_votes(w, "floor"))} for w in (1.0, 1.2, 1.5)},
}


def _fill_tree(capture: dict, mirrors: Path) -> None:
    """Captures made before the tree was kept: each row's files at the parent and its shortlisted Python test
    files' texts, from the mirror ``mirrors/owner+name/repo``."""
    rows = [row for row in capture["rows"] if "files" not in row]
    if not rows:
        return
    mirror = mirrors / capture["repo"] / "repo"
    for row in rows:
        row["files"] = git(mirror, "ls-tree", "-r", "--name-only", row["commit"] + "^").splitlines()
        tests = sorted({it.path for it in row["items"].values() if it.path and it.path.endswith(".py") and test_subject(it.path)})
        row["test_texts"] = dict(zip(tests, _blobs(mirror, [f"{row['commit']}^:{p}" for p in tests])))


def _blobs(repo: Path, names: list[str]) -> list[str]:
    """The texts of ``rev:path`` names, by one ``git cat-file --batch``."""
    if not names:
        return []
    out = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input="\n".join(names).encode() + b"\n",
                         capture_output=True, check=True).stdout
    texts, i = [], 0
    for _ in names:
        end = out.index(b"\n", i)
        header = out[i:end].split()
        if header[-1] == b"missing":
            texts.append("")
            i = end + 1
            continue
        size = int(header[2])
        texts.append(out[end + 1:end + 1 + size].decode("utf-8", "replace"))
        i = end + 1 + size + 1
    return texts


def replay(args) -> int:
    captured = []
    for path in args.captures:
        with open(path, "rb") as f:
            captured.append(pickle.load(f))
    names = [c["repo"].split("+")[-1] for c in captured]
    for c in captured:
        _fill_tree(c, args.mirrors)
    for c, name in zip(captured, names):
        same = sum(replay_files(row, {}) == row["live"] for row in c["rows"])
        print(f"{name}: live lists reproduced {same} of {len(c['rows'])}")
    results = {}
    chosen = {k: v for k, v in VARIANTS.items() if k.startswith("shipped") or not args.only or args.only in k}
    for variant, spec in chosen.items():
        per_repo = {}
        for c, name in zip(captured, names):
            source, every = [], []
            for i, row in enumerate(c["rows"]):
                if i % 3 == 2:  # held out: not shown
                    continue
                files = replay_files(row, spec)
                source.append(metrics([p for p in files if is_source(p)], row["relevant"])["mrr@10"])
                every.append(metrics(files, row["relevant"])["mrr@10"])
            per_repo[name] = (sum(source) / len(source), sum(every) / len(every))
        results[variant] = per_repo
    base = results["shipped (prior 0.3, 20 commits)"]
    print(f"{'tuning, source-view MRR@10':42s}" + "".join(f"{n[:8]:>9s}" for n in names) + f"{'mean':>8s}{'up/down':>9s}{'all Δ':>8s}")
    for variant, per_repo in results.items():
        mean = sum(v[0] for v in per_repo.values()) / len(per_repo)
        up = sum(per_repo[n][0] > base[n][0] + 1e-9 for n in names)
        down = sum(per_repo[n][0] < base[n][0] - 1e-9 for n in names)
        all_delta = sum(per_repo[n][1] - base[n][1] for n in names) / len(names)
        print(f"{variant[:42]:42s}" + "".join(f"{per_repo[n][0]:9.3f}" for n in names) + f"{mean:8.3f}{up:>5d}/{down:<3d}{all_delta:+8.3f}")
    if not args.only:
        _headroom(captured, names)
    return 0


def _headroom(captured: list[dict], names: list[str]) -> None:
    """Where the first changed source file stands with the shipped settings (tuning part), and an oracle that
    takes, per query, the best of the prior off, shipped and dominant (weight 10): not a ranking, a bound on
    what choosing the prior's weight per query could give."""
    print("\ntuning, shipped: the first changed source file at rank 1 / 2-3 / 4-10 / >10 / not listed; "
          "the oracle's MRR@10")
    for c, name in zip(captured, names):
        places = [0] * 5
        oracle = []
        for i, row in enumerate(c["rows"]):
            if i % 3 == 2:
                continue
            lists = {w: [p for p in replay_files(row, {"rank": prior_rank(weight=w)}) if is_source(p)] for w in (0.0, 0.3, 10.0)}
            ranks = [lists[0.3].index(p) + 1 for p in row["relevant"] if p in lists[0.3]]
            best = min(ranks) if ranks else None
            places[4 if best is None else 0 if best == 1 else 1 if best <= 3 else 2 if best <= 10 else 3] += 1
            oracle.append(max(metrics(files, row["relevant"])["mrr@10"] for files in lists.values()))
        print(f"{name:10s} {' / '.join(map(str, places))}   oracle {sum(oracle) / len(oracle):.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture", help="run unified search once per evaluated commit and keep its state")
    cap.add_argument("repo", type=Path, help="a git repository (bare mirror or clone); it is not modified")
    cap.add_argument("--workdir", type=Path, help="work tree to check commits out in")
    cap.add_argument("--commits", type=int, default=150)
    cap.add_argument("--out", type=Path, required=True)
    rep = sub.add_parser("replay", help="score the variants over captured searches (tuning part only)")
    rep.add_argument("captures", type=Path, nargs="+")
    rep.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                     help="where owner+name/repo mirrors are, for captures made without the files of the tree")
    rep.add_argument("--only", help="replay only the variants whose name holds this text (and the shipped row)")
    args = ap.parse_args()
    return capture(args) if args.command == "capture" else replay(args)


if __name__ == "__main__":
    raise SystemExit(main())
