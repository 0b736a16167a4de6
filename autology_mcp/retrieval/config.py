"""Settings of unified retrieval, read from ``[tool.autology.retrieval]`` (or ``[retrieval]`` in
``.autology/config.toml``) with defaults that need no tuning. See docs/retrieval.md.

Every number of the scoring lives here, so the docs, the code and a project's overrides agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from autology_mcp.common.config import section
from autology_mcp.common.errors import ValidationError
from autology_mcp.common.paths import ProjectPaths

CHANNELS = ("node_bm25", "node_title_tags", "code_bm25", "symbols", "paths", "vectors", "sessions", "history", "graph")

# Tuned on the judged knowledge queries (bench/knowledge_eval.py) and the commit-history code
# evaluation (bench/unified_code_eval.py); see docs/retrieval.md for what each choice cost or gained.
DEFAULT_CHANNEL_WEIGHTS = {
    "node_bm25": 1.0,
    "node_title_tags": 0.1,
    "code_bm25": 1.0,
    "symbols": 0.6,
    "paths": 0.5,
    "vectors": 0.6,
    "sessions": 0.7,
    "history": 0.7,
    "graph": 0.1,  # neighbours brought in by graph expansion (times relation weight and confidence)
}
DEFAULT_TYPE_PRIORS = {  # equal: favouring decisions (or demoting session logs) cost knowledge nDCG@10
    "decision": 1.0,
    "convention": 1.0,
    "component": 1.0,
    "pattern": 1.0,
    "issue": 1.0,
    "concept": 1.0,
    "session": 1.0,
}
DEFAULT_STATUS_PRIORS = {"active": 1.0, "needs_review": 0.9, "superseded": 0.4}
# A commit weighs as much as code (issue 41): at 0.7 a commit first in its channel holding every query word
# scored 0.85, under the 0.925 of such a chunk, and a chunk that barely held the subject outranked the commit
# that explained it (bench/history_eval.py, tuning part: search top 3 23.6 % at 0.7, 27.6 % at 0.85)
DEFAULT_KIND_PRIORS = {"code": 0.85, "doc": 0.8, "session_chunk": 0.65, "handoff": 0.7, "commit": 0.85}
DEFAULT_RANK_SHARE = {"nodes": 0.65, "files": 0.5, "sessions": 0.65, "history": 0.65}
DEFAULT_RELATION_WEIGHTS = {
    "supersedes": 0.9,
    "implements": 0.8,
    "depends_on": 0.7,
    "uses": 0.7,
    "affects": 0.7,
    "derived_from": 0.6,
    "relates_to": 0.5,
}


@dataclass(frozen=True)
class RetrievalConfig:
    """Every setting of ``[tool.autology.retrieval]``; see docs/retrieval.md."""

    rrf_k: int = 60
    channel_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CHANNEL_WEIGHTS))
    blend_priority: float = 0.5
    blend_similarity: float = 0.3
    blend_keyword: float = 0.2
    similarity_floor: float = 0.35
    # of similarity, by source: the RRF rank part; the rest is the vector cosine (a chunk's stored
    # vector holds its path and symbol too, a node's is computed from its opening only)
    rank_share: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RANK_SHARE))
    keyword_idf: bool = True  # weigh the query's terms by how few shortlisted candidates hold them
    file_share: float = 0.3  # of a code or doc chunk's index score, the share taken from its file's best chunks
    mmr_lambda: float = 0.7
    ambiguity_margin: float = 0.03  # best scores of two clusters this close ...
    ambiguity_mass: float = 0.6  # ... and the second cluster weighs this much of the first: ambiguous
    grounded_min_keyword: float = 0.5  # a file's hit is its best chunk holding more than this share of the query's terms
    # the evidence gate (retrieval/gate.py): an answer is grounded when its best hit's support reaches
    # gate_threshold; an item the prompt hook injects or the context bundle lists needs gate_item_threshold
    gate_threshold: float = 0.2
    gate_item_threshold: float = 0.15
    type_priors: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TYPE_PRIORS))
    status_priors: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_STATUS_PRIORS))
    kind_priors: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_KIND_PRIORS))
    relation_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RELATION_WEIGHTS))
    # "tag:<tag>" (nodes) or a path glob (code, docs, node files) -> multiplier of the priority; the lowest match wins
    area_priors: dict[str, float] = field(default_factory=dict)
    # the history prior (retrieval/history_prior.py): a code or doc hit's score is raised by this much times its
    # file's prior from the best history_prior_commits commits matching the query (0 to 1); 0 turns it off
    history_prior: float = 0.3
    history_prior_commits: int = 20
    pool: int = 40  # candidates taken from each code, docs and sessions channel
    node_pool: int = 20  # candidates taken from each node channel
    expand_top: int = 5  # graph expansion starts from this many best node hits
    refresh_interval_s: float = 5.0  # the code index's size/mtime check runs at most this often per process
    default_max_tokens: int = 2000
    tokenizer: str = "auto"  # auto: tiktoken when installed and its encoding is available offline; chars: 4 chars/token


_FLOAT_RANGES = {
    "blend_priority": (0.0, 1.0),
    "blend_similarity": (0.0, 1.0),
    "blend_keyword": (0.0, 1.0),
    "similarity_floor": (0.0, 1.0),
    "file_share": (0.0, 1.0),
    "mmr_lambda": (0.0, 1.0),
    "ambiguity_margin": (0.0, 1.0),
    "ambiguity_mass": (0.0, 1.0),
    "grounded_min_keyword": (0.0, 0.99),
    "gate_threshold": (0.0, 1.0),
    "gate_item_threshold": (0.0, 1.0),
    "refresh_interval_s": (0.0, 86400.0),
    "history_prior": (0.0, 1.0),
}
_INT_RANGES = {"rrf_k": (1, 10_000), "pool": (5, 500), "node_pool": (5, 100), "expand_top": (0, 50), "history_prior_commits": (1, 200), "default_max_tokens": (200, 200_000)}
_TABLE_KEYS: dict[str, set[str] | None] = {
    "channel_weights": set(DEFAULT_CHANNEL_WEIGHTS),
    "type_priors": set(DEFAULT_TYPE_PRIORS),
    "status_priors": set(DEFAULT_STATUS_PRIORS),
    "kind_priors": set(DEFAULT_KIND_PRIORS),
    "relation_weights": set(DEFAULT_RELATION_WEIGHTS),
    "area_priors": None,
    "rank_share": set(DEFAULT_RANK_SHARE),
}
TOKENIZERS = ("auto", "chars")


def config_from_dict(raw: dict[str, Any]) -> RetrievalConfig:
    defaults = RetrievalConfig()
    known = {f.name for f in fields(RetrievalConfig)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        where = f"[tool.autology.retrieval] {key}"
        if name not in known:
            raise ValidationError(where, "unknown setting", sorted(known))
        if name in _TABLE_KEYS:
            if not isinstance(value, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 10 for v in value.values()
            ):
                raise ValidationError(where, "must be a table of numbers from 0 to 10")
            allowed = _TABLE_KEYS[name]
            if allowed is not None:
                unknown = set(value) - allowed
                if unknown:
                    raise ValidationError(where, f"unknown key {sorted(unknown)[0]!r}", sorted(allowed))
                value = {**getattr(defaults, name), **{k: float(v) for k, v in value.items()}}
            else:
                value = {str(k): float(v) for k, v in value.items()}
        elif name in _INT_RANGES:
            lo, hi = _INT_RANGES[name]
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValidationError(where, f"must be a whole number from {lo} to {hi}")
        elif name in _FLOAT_RANGES:
            lo, hi = _FLOAT_RANGES[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise ValidationError(where, f"must be a number from {lo:g} to {hi:g}")
            value = float(value)
        elif name == "keyword_idf":
            if not isinstance(value, bool):
                raise ValidationError(where, "must be true or false")
        elif name == "tokenizer":
            if value not in TOKENIZERS:
                raise ValidationError(where, f"unknown tokenizer {value!r}", TOKENIZERS)
        values[name] = value
    cfg = RetrievalConfig(**values)
    total = cfg.blend_priority + cfg.blend_similarity + cfg.blend_keyword
    if abs(total - 1.0) > 1e-6:
        raise ValidationError("[tool.autology.retrieval] blend_*", f"the three blend weights must add up to 1, got {total:g}")
    return cfg


def load_retrieval_config(root: str | Path) -> RetrievalConfig:
    return config_from_dict(section(root, "retrieval"))


_loaded: dict[str, tuple[tuple, Any]] = {}


def _stamp(root: Path) -> tuple:
    out = []
    for path in (root / "pyproject.toml", ProjectPaths(root).base / "config.toml"):
        try:
            st = path.stat()
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def project_configs(root: Path) -> tuple[RetrievalConfig, Any]:
    """(retrieval config, repository index config) of the project, parsed again only when one of
    its two config files changed (two stats per search instead of parsing and copying the tables)."""
    from autology_mcp.code.config import load_index_config

    key = str(root)
    stamp = _stamp(root)
    have = _loaded.get(key)
    if have is not None and have[0] == stamp:
        return have[1]
    value = (load_retrieval_config(root), load_index_config(root))
    _loaded[key] = (stamp, value)
    return value
