"""Session memory's dense channel (issue 31), used only when semantic recall is on
(:mod:`autology_mcp.semantic.runtime`): every turn's vector, and per chunk two similarities to a query.

- ``turn``: the best cosine between the query and one of the chunk's turns (a chunk is found by the one
  turn that says what the query asks, in other words);
- ``mean``: the cosine between the query and the mean of the chunk's turn vectors (no extra embedding).

:func:`search_sessions` adds both, each counted above the memory's mean similarity to the query and
divided by its best value among the candidates, to the lexical score (:data:`WEIGHTS`), and the chunks
whose best turn is among the query's nearest turns join the candidates, so a paraphrase with no word in
common can be found. Vectors are a derived cache (``.autology/cache/semantic.sqlite``, kind
``session_turn``, key ``<session>:<turn>``), made by :func:`sync_turn_vectors` (``autology semantic
enable``, ``autology semantic sync``, and a running server after session memory changed); a chunk whose
turns have no vector yet is ranked lexically.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from autology_mcp.sessions.chunking import render_turn

if TYPE_CHECKING:
    import numpy as np

KIND = "session_turn"
# (best turn, mean of turns): chosen on LoCoMo's tuning conversations through search_sessions itself, as the
# best mean over two unlike models, all-MiniLM-L6-v2 and nomic-embed-text-v1.5 (bench/sessions_locomo_eval.py
# --semantic); reported on the held-out ones (docs/benchmarks.md).
WEIGHTS = (0.4, 0.2)
NEAREST_TURNS = 40  # the query's nearest turns whose chunks join the candidates


def turn_texts(root: Path) -> dict[str, str]:
    """Every ingested turn's text as its chunk shows it, by ``<session>:<turn>``."""
    from autology_mcp.sessions.paths import sessions_dir
    from autology_mcp.sessions.store import load_session

    texts: dict[str, str] = {}
    folder = sessions_dir(Path(root))
    if not folder.is_dir():
        return texts
    for path in sorted(folder.glob("*.jsonl")):
        record = load_session(root, path.stem)
        if record is None:
            continue
        for turn in record.turns:
            texts[f"{record.session_id}:{turn.n}"] = render_turn(turn, record.state.agent)
    return texts


def sync_turn_vectors(root: Path, should_stop: Callable[[], bool] | None = None, may_load: bool = True,
                      progress: Callable[[int, int], None] | None = None) -> int | None:
    """Embed the turns that have no vector yet (and drop those of forgotten sessions); how many were
    embedded, or None when semantic recall is off here or its model cannot be loaded. ``progress`` is told
    (embedded, to embed) as it goes."""
    from autology_mcp.semantic import runtime

    return runtime.sync(root, KIND, lambda: turn_texts(root), should_stop, may_load, progress)


class DenseScores:
    """The query's similarities to the turns of session memory, per chunk."""

    def __init__(self, keys: list[str], matrix: np.ndarray, query: np.ndarray):
        self.row = {key: i for i, key in enumerate(keys)}
        self.matrix = matrix
        self.sims = matrix @ query if len(keys) else matrix[:, :0].sum(axis=1)
        self.query = query

    def nearest_turns(self, count: int) -> list[tuple[str, int]]:
        """(session, turn) of the ``count`` turns nearest the query."""
        import numpy as np

        if not len(self.sims):
            return []
        top = np.argsort(-self.sims, kind="stable")[:count]
        keys = list(self.row)
        return [(keys[i].rsplit(":", 1)[0], int(keys[i].rsplit(":", 1)[1])) for i in top.tolist()]

    def chunk(self, session_id: str, turn_start: int, turn_end: int) -> tuple[float, float] | None:
        """(best turn cosine, cosine with the mean of the turns) of a chunk; None when its turns have no vectors."""
        import numpy as np

        rows = [self.row[k] for k in (f"{session_id}:{n}" for n in range(turn_start, turn_end + 1)) if k in self.row]
        if not rows:
            return None
        best = float(self.sims[rows].max())
        total = self.matrix[rows].sum(axis=0)
        norm = float(np.linalg.norm(total))
        return best, (float(total @ self.query) / norm if norm else 0.0)

    def fused(self, chunks: dict[int, tuple[str, int, int]]) -> tuple[dict[int, float], float]:
        """Per chunk (``rowid: (session, first turn, last turn)``): :data:`WEIGHTS` times its two
        similarities, each counted above the memory's mean similarity to the query and divided by the best
        among these chunks; and the scale that brings a lexical score in [0, 1] plus these back into [0, 1]
        (1 + the weights). Chunks without vectors are left out.

        Above the mean: a model whose unrelated texts sit at cosine 0.5 (nomic, e5) and one whose sit near 0
        (MiniLM) are put on the same footing, so one weighting serves both (docs/benchmarks.md)."""
        pairs = {rowid: self.chunk(*span) for rowid, span in chunks.items()}
        pairs = {rowid: p for rowid, p in pairs.items() if p is not None}
        a, d = WEIGHTS
        if not pairs:
            return {}, 1.0 + a + d
        floor = float(self.sims.mean())
        best_turn = max(max(p[0] for p in pairs.values()) - floor, 1e-9)
        best_mean = max(max(p[1] for p in pairs.values()) - floor, 1e-9)
        return ({rowid: a * max(t - floor, 0.0) / best_turn + d * max(m - floor, 0.0) / best_mean
                 for rowid, (t, m) in pairs.items()}, 1.0 + a + d)


def dense_scores(root: Path, query: str) -> DenseScores | None:
    """The query's similarities, when semantic recall is on here and has vectors; else None."""
    from autology_mcp.semantic import runtime

    found = runtime.query_matrix(root, query, KIND)
    return DenseScores(*found) if found else None


def coverage(root: Path) -> dict:
    """What ``autology_status`` and ``autology doctor`` say of semantic recall: on or off, the model, whether
    its files are there (``model_missing``: what is not), how many of session memory's turns have a vector,
    and whether the hooks use the vectors now (``hooks``: :func:`~autology_mcp.semantic.runtime.hooks_status`).
    ``enabled: false`` and nothing else when off."""
    from autology_mcp.semantic import runtime
    from autology_mcp.semantic.encoder import available
    from autology_mcp.semantic.state import load_state, missing

    state = load_state(root)
    if state is None:
        return {"enabled": False}
    out: dict = {"enabled": True, "model": state.model, "dimension": state.dimension, "extra_installed": available()}
    if not out["extra_installed"]:
        return out
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.paths import sessions_dir

    turns = 0
    if sessions_dir(Path(root)).is_dir():
        with SessionIndex.for_root(Path(root)).reading() as conn:
            turns = conn.execute("SELECT coalesce(sum(turns), 0) FROM sources").fetchone()[0]
    out["session_turns"] = turns
    out["session_turns_with_vectors"] = runtime.cache(root, state).counts().get(KIND, 0)
    from autology_mcp.semantic.nodes import count_with_vectors

    out["nodes_with_vectors"] = count_with_vectors(root)  # the node search re-ranks by them (semantic/nodes.py)
    gone = missing(state)
    if gone:
        out["model_missing"] = gone
    out["hooks"] = runtime.hooks_status(root)  # a server that loaded the model before it went keeps it
    return out
