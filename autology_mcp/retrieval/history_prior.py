"""The history prior for code ranking (issue 41, item 3).

A change is often about the files earlier changes with similar messages touched: in bug localisation
that is one of the strongest signals (BugLocator's "similar bugs", Locus's change history). The
commits HEAD reaches that best match the query (the history channel's search, so only history before
HEAD, never a change not yet made) vote for the files they touched: each commit its score relative to
the best commit's, shared among its files (a commit touching forty files says less about each of them
than one touching two). A file's prior is its votes over the best file's, times how well the best
commit matched (its search score, 0 to 1): history that shares one common word with the query moves
little. The blend score of the file's code and doc hits is raised by ``history_prior`` (a setting)
times it. The prior orders hits, it is not evidence: it changes neither a hit's similarity nor its
keywords, so the evidence gate and the verdict read what they read without it.

Chosen on the tuning part of the code evaluations (bench/code_variant_sweep.py, docs/benchmarks.md
"History as memory"): on httpx, whose every change touches one of two central modules, the prior
without the best commit's score as its scale cost 0.075 MRR@10; with it, 0.03, the others unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SPREAD = 0.5  # a commit's vote is shared among its n files as 1 / n ** SPREAD


def file_prior(commits: Iterable[tuple[float, Sequence[str]]], depth: int, spread: float = SPREAD) -> dict[str, float]:
    """Each file's prior from the ``depth`` best ``(score, files)`` commits, best first (scores from 0
    to 1): the best file's is the best commit's score, the others in proportion to their votes; empty
    when no commit scored."""
    votes: dict[str, float] = {}
    top = None
    for score, files in list(commits)[:depth]:
        if score <= 0 or not files:
            continue
        top = top or score
        share = (score / top) / len(files) ** spread
        for path in files:
            votes[path] = votes.get(path, 0.0) + share
    if not votes:
        return {}
    scale = min(1.0, top) / max(votes.values())
    return {path: v * scale for path, v in votes.items()}
