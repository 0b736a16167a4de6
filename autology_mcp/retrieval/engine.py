"""Unified retrieval: one always-on search over knowledge nodes, code, docs and past sessions.

    channels → RRF fusion → graph expansion → blend score → MMR → verdict → proof spans → budget

Every query runs every channel of its scope (the intent only weights them), the answer always says
what it found and how (``trace``), and it always fits ``max_tokens``. See docs/retrieval.md.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.markdown import render_node
from autology_mcp.retrieval import budget as budget_mod
from autology_mcp.retrieval import channels as ch
from autology_mcp.retrieval import expand, scoring
from autology_mcp.retrieval.candidates import Candidate
from autology_mcp.retrieval.config import RetrievalConfig, project_configs
from autology_mcp.retrieval.fusion import location_similarity, mmr, rrf
from autology_mcp.retrieval.intent import classify_intent
from autology_mcp.common.text import keyword_stem, keyword_terms
from autology_mcp.retrieval.text import proof_window
from autology_mcp.retrieval.verdict import decide
from autology_mcp.knowledge.store import NodeStore

SCOPES = ("nodes", "code", "docs", "sessions")
DETAILS = ("brief", "normal", "full")
LIMIT_MAX = 50
QUERY_MAX = 2000
SNIPPET_LINES = {"brief": 1, "normal": 3, "full": 8}
SNIPPET_WIDTH = 200


def _validate(query: Any, scope: Any, limit: Any, max_tokens: Any, detail: Any, cfg: RetrievalConfig):
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query", "must be a non-empty string")
    if len(query) > QUERY_MAX:
        raise ValidationError("query", f"is {len(query)} characters long; the limit is {QUERY_MAX}")
    if scope is None:
        scopes = set(SCOPES)
    else:
        if isinstance(scope, str) or not isinstance(scope, (list, tuple, set, frozenset)):
            raise ValidationError("scope", "must be a list of scopes", SCOPES)
        scopes = set()
        for s in scope:
            if s not in SCOPES:
                raise ValidationError("scope", f"unknown scope {s!r}", SCOPES)
            scopes.add(s)
        if not scopes:
            raise ValidationError("scope", "must name at least one scope", SCOPES)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise ValidationError("limit", f"must be a whole number from 1 to {LIMIT_MAX}, got {limit!r}")
    if max_tokens is None:
        max_tokens = cfg.default_max_tokens
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < budget_mod.MIN_TOKENS:
        raise ValidationError("max_tokens", f"must be a whole number of at least {budget_mod.MIN_TOKENS}, got {max_tokens!r}")
    if detail not in DETAILS:
        raise ValidationError("detail", f"unknown detail level {detail!r}", DETAILS)
    return query.strip(), scopes, limit, max_tokens


def search(
    root: Path,
    query: str,
    *,
    scope: Sequence[str] | None = None,
    limit: int = 10,
    max_tokens: int | None = None,
    detail: str = "normal",
    store: NodeStore | None = None,
    module_hint: str | None = None,
) -> dict:
    """Search every source in ``scope`` (None: all) and return a JSON-ready answer: ``query, intent,
    verdict, clarifying_question, guidance, hits, cut, trace`` (see docs/retrieval.md)."""
    answer, max_tokens, counter = run(
        root, query, scope=scope, limit=limit, max_tokens=max_tokens, detail=detail, store=store, module_hint=module_hint
    )
    return budget_mod.fit(answer, max_tokens, compact_trace, counter)


def run(
    root: Path,
    query: str,
    *,
    scope: Sequence[str] | None = None,
    limit: int = 10,
    max_tokens: int | None = None,
    detail: str = "normal",
    store: NodeStore | None = None,
    module_hint: str | None = None,
):
    """The answer before the budget is applied, the validated budget, and the token counter."""
    root = Path(root).resolve()
    cfg, index_cfg = project_configs(root)
    query, scopes, limit, max_tokens = _validate(query, scope, limit, max_tokens, detail, cfg)
    own_store = store is None
    if own_store and "nodes" in scopes:
        store = open_store(root)
    try:
        answer = _search(root, query, scopes, limit, detail, store, cfg, index_cfg, module_hint)
    finally:
        if own_store and store is not None:
            store.close()
    counter, _ = budget_mod.token_counter(cfg.tokenizer)
    return answer, max_tokens, counter


def open_store(root: Path) -> NodeStore:
    """The project's node store, brought in step with the files (for callers without a server)."""
    store = NodeStore(root)
    store.init()
    store.reconcile()
    return store


def _search(root, query, scopes, limit, detail, store, cfg, index_cfg, module_hint) -> dict:
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    intent = classify_intent(query)
    qterms = keyword_terms(query + (" " + module_hint if module_hint else ""))
    term_stems = list(dict.fromkeys(keyword_stem(t) for t in qterms))
    text_query = query + (" " + module_hint if module_hint else "")
    weights = intent.channel_weights(cfg.channel_weights)
    pool = ch.Pool()
    runs: list[ch.ChannelRun] = []
    freshness: dict[str, Any] = {}

    # ---------------------------------------------------------------- channels
    # The node channels run in a worker thread while this one runs the code channels: both spend
    # much of their time inside SQLite, which releases the GIL.
    t = time.perf_counter()
    where = ch.index_location(root, index_cfg) if ("code" in scopes or "docs" in scopes) else None
    node_job = None
    if "nodes" in scopes:
        node_job = _executor().submit(ch.node_channels, store, text_query, qterms, ch.Pool(), cfg.node_pool)
    code_runs: list[ch.ChannelRun] = []
    code_pool = ch.Pool()
    if where is not None:
        code_runs, code_fresh = ch.code_channels(
            root, text_query, code_pool, cfg.pool, cfg.refresh_interval_s, "code" in scopes, "docs" in scopes, where
        )
        freshness["code_index"] = code_fresh.as_dict()
    else:
        code_runs = [ch.ChannelRun(n, "out_of_scope") for n in ("code_bm25", "symbols", "paths", "vectors")]
    if node_job is not None:
        node_runs, node_pool = node_job.result()
        runs += node_runs
        pool.items.update(node_pool.items)
        freshness["nodes"] = {"generation": store.index.generation(), "nodes": store.index.count()}
    else:
        runs += [ch.ChannelRun("node_bm25", "out_of_scope"), ch.ChannelRun("node_title_tags", "out_of_scope")]
    runs += code_runs
    pool.items.update(code_pool.items)
    if "sessions" in scopes:
        runs.append(ch.sessions_channel(root, text_query, pool, cfg.pool))
        freshness["sessions"] = runs[-1].status
    else:
        runs.append(ch.ChannelRun("sessions", "out_of_scope"))
    timings["channels"] = (time.perf_counter() - t) * 1000

    # ---------------------------------------------------------------- fusion
    t = time.perf_counter()
    rankings = {r.name: r.ranking for r in runs if r.ranking}
    scores = rrf(rankings, weights, cfg.rrf_k)
    found_by: dict[str, list[str]] = {}
    for r in runs:
        for key in r.ranking:
            found_by.setdefault(key, []).append(r.name)
    for key, names in found_by.items():
        if key in pool.items:
            pool.items[key].meta["channels"] = names
    timings["fusion"] = (time.perf_counter() - t) * 1000

    # ---------------------------------------------------------------- graph expansion
    t = time.perf_counter()
    superseded: list[dict] = []
    graph_ranking: list[str] = []
    if "nodes" in scopes and store is not None:
        superseded = expand.apply_supersession(store, pool, scores)
        gw = weights.get("graph", 0.5)
        credits = expand.neighbour_credits(store, pool, scores, cfg, gw)
        credits += expand.reference_credits(store, pool, scores, cfg, gw)
        graph_ranking = expand.apply_credits(store, pool, scores, credits)
        for key in graph_ranking:
            pool.items[key].meta.setdefault("channels", [])
            if "graph" not in pool.items[key].meta["channels"]:
                pool.items[key].meta["channels"].append("graph")
    timings["expand"] = (time.perf_counter() - t) * 1000

    # ---------------------------------------------------------------- score
    t = time.perf_counter()
    ranked = sorted((k for k in scores if k in pool.items), key=lambda k: (-scores[k], k))
    shortlist = ranked[: max(limit * 3, 30)]  # what is scored, then floored and diversified
    missing_text = {pool.items[k].meta["rowid"]: k for k in shortlist if not pool.items[k].text and k.startswith("chunk:")}
    if missing_text:
        for rowid, text in ch.load_chunk_texts(where[1], list(missing_text)).items():
            pool.items[missing_text[rowid]].text = text
    qvec = scoring.query_vector(text_query)
    scored: dict[str, dict[str, float]] = {}
    matched = {key: scoring.keyword(term_stems, pool.items[key])[1] for key in shortlist}
    term_weights = scoring.term_weights(term_stems, matched.values(), cfg.keyword_idf)
    for key in shortlist:
        cand = pool.items[key]
        kw = scoring.weighted_share(matched[key], term_weights)
        cos = scoring.cosine(qvec, cand) if cand.kind in ("node", "session_chunk", "handoff") else (cand.cosine or 0.0)
        sim = scoring.similarity(scores[key], cos, cand.kind, weights, cfg.rrf_k, scoring.rank_share(cand, cfg))
        pri = scoring.priority(cand, cfg, intent)
        if module_hint and _in_module(cand, module_hint):
            pri = min(1.0, pri * 1.15)
        scored[key] = {
            "priority": round(pri, 4),
            "similarity": round(sim, 4),
            "keyword": round(kw, 4),
            "rrf": round(scores[key], 6),
            "score": round(scoring.blend(pri, sim, kw, cfg), 4),
        }
    timings["score"] = (time.perf_counter() - t) * 1000

    # ---------------------------------------------------------------- floor, MMR
    t = time.perf_counter()
    # Evidence: something of the query in the text, or reached through the graph from evidence.
    # The floor applies to direct evidence; a node the graph brought in (neighbour, referencing
    # node, successor) passes when a hit it came from passes.
    evidence = [k for k in shortlist if scored[k]["keyword"] > 0 or pool.items[k].via]
    floor = cfg.similarity_floor
    direct_above = {k for k in evidence if scored[k]["similarity"] >= floor and scored[k]["keyword"] > 0}

    def passes(key: str) -> bool:
        cand = pool.items[key]
        if key in direct_above:
            return True
        if not cand.via:
            return False
        if cand.meta.get("supersedes_chain"):  # a successor stands in for the hit it replaced
            return scored[key]["similarity"] >= floor or scored[key]["keyword"] > 0
        return any(parent in direct_above for parent in cand.meta.get("graph_parents", []))

    above = [k for k in evidence if passes(k)]
    below_floor = len(evidence) - len(above)
    chosen_pool = above if above else evidence
    by_score = sorted(chosen_pool, key=lambda k: (-scored[k]["score"], k))
    relevance = {k: scored[k]["score"] for k in by_score}

    def diversity(a: str, b: str) -> float:
        ca, cb = pool.items[a], pool.items[b]
        return location_similarity(ca.tree, cb.tree, ca.kind == cb.kind)

    order = mmr(by_score, relevance, diversity, cfg.mmr_lambda, limit)
    timings["mmr"] = (time.perf_counter() - t) * 1000

    # ---------------------------------------------------------------- spans, verdict
    t = time.perf_counter()
    hits = [_hit(pool.items[k], scored[k], term_stems, detail, store, root) for k in order]
    verdict = decide(query, intent, hits, [pool.items[k] for k in order], scored_keys=order, scored=scored,
                     cfg=cfg, freshness=freshness, scopes=scopes)
    timings["spans"] = (time.perf_counter() - t) * 1000
    timings["total"] = (time.perf_counter() - t_start) * 1000

    trace = {
        "intent": {"name": intent.name, "cues": list(intent.cues)[:8]},
        "scope": sorted(scopes),
        "channels": [
            {"name": r.name, "status": r.status, "candidates": len(r.ranking), "ms": round(r.ms, 2)}
            | ({"note": r.note} if r.note else {})
            for r in runs
        ]
        + [{"name": "graph", "status": "ok" if graph_ranking else "empty", "candidates": len(graph_ranking)}],
        "fusion": {
            "k": cfg.rrf_k,
            "weights": {k: round(v, 3) for k, v in weights.items()},
            "inputs": {r.name: [pool.items[k].ref for k in r.ranking[:5] if k in pool.items] for r in runs if r.ranking}
            | ({"graph": [pool.items[k].ref for k in graph_ranking[:5]]} if graph_ranking else {}),
            "fused": len(scores),
            "shortlist": len(shortlist),
            "evidence": len(evidence),
            "below_floor": below_floor,
            "superseded_replaced": superseded,
        },
        "floor": cfg.similarity_floor,
        "freshness": freshness,
        "timings_ms": {k: round(v, 2) for k, v in timings.items()},
    }
    trace["tokenizer"] = budget_mod.token_counter(cfg.tokenizer)[1]
    answer = {
        "query": query,
        "intent": intent.name,
        "verdict": verdict.verdict,
        "clarifying_question": verdict.question,
        "guidance": verdict.guidance,
        "hits": hits,
        "cut": {"beyond_limit": max(0, len(chosen_pool) - len(hits))},
        "trace": trace,
    }
    if detail == "brief":
        answer["trace"] = compact_trace(trace, "compact")
    return answer


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="autology-retrieval")
        return _pool


def _in_module(cand: Candidate, hint: str) -> bool:
    hint = hint.strip().strip("/").lower()
    if not hint:
        return False
    if cand.path and (cand.path.lower().startswith(hint + "/") or f"/{hint}/" in "/" + cand.path.lower()):
        return True
    if cand.node is not None:
        return hint in cand.node.tags or any(r.lower().startswith(hint) for r in cand.node.references)
    return False


def compact_trace(trace: dict[str, Any], level: str) -> dict[str, Any]:
    out = dict(trace)
    fusion = dict(out.get("fusion", {}))
    if level == "compact":
        fusion["inputs"] = {c: refs[:2] for c, refs in fusion.get("inputs", {}).items()}
        fusion.pop("weights", None)
        out["channels"] = [{k: v for k, v in c.items() if k != "note"} for c in out.get("channels", [])]
        out["intent"] = {"name": out.get("intent", {}).get("name"), "cues": out.get("intent", {}).get("cues", [])[:3]}
    else:  # minimal: counts and states only
        fusion = {"k": fusion.get("k"), "fused": fusion.get("fused"), "evidence": fusion.get("evidence")}
        chans = out.get("channels", [])
        if isinstance(chans, list):
            out["channels"] = {c["name"]: f"{c['status']}:{c['candidates']}" for c in chans}
        out["intent"] = {"name": out.get("intent", {}).get("name")}
        fresh = out.get("freshness", {})
        code = fresh.get("code_index")
        out["freshness"] = {"code_index": (code.get("checked") if code.get("exists") else "missing")} if isinstance(code, dict) else {}
        out["timings_ms"] = {"total": out.get("timings_ms", {}).get("total", 0.0)}
        for key in ("tokenizer", "scope", "floor"):
            out.pop(key, None)
    out["fusion"] = fusion
    return out


def _hit(cand: Candidate, s: dict[str, float], term_stems: list[str], detail: str, store, root: Path) -> dict:
    n_lines = SNIPPET_LINES[detail]
    hit: dict[str, Any] = {
        "kind": cand.kind,
        "ref": cand.ref,
        "node_id": cand.node.id if cand.node is not None else None,
        "node_type": cand.node.type.value if cand.node is not None else None,
        "title": cand.title,
        "path": cand.path,
        "start_line": None,
        "end_line": None,
        "snippet": "",
        "score": s["score"],
        "components": {k: s[k] for k in ("priority", "similarity", "keyword", "rrf")},
        "channels": sorted(set(cand.meta.get("channels", []) + cand.meta.get("channels_inherited", []))),
        "via": cand.via,
    }
    if cand.node is not None:
        node = cand.node
        hit["status"] = node.status.value
        rel = store.index.node_path(node.id) if store is not None else None
        lines: list[str] | None = None
        if rel:
            hit["path"] = rel
            try:
                lines = (root / rel).read_text(encoding="utf-8").split("\n")
            except OSError:
                lines = None
        if lines is None:
            lines = render_node(node).split("\n")
        # The proof lines come from the text under the title (the title is the hit's own field).
        body_at = _body_start(lines)
        while body_at < len(lines) - 1 and (not lines[body_at].strip() or lines[body_at].startswith("# ")):
            body_at += 1
        at, matched = proof_window(lines[body_at:], term_stems, n_lines)
        start = body_at + at
        while not matched and start < len(lines) - 1 and (not lines[start].strip() or lines[start].startswith("#")):
            start += 1  # nothing of the query in the text (a graph neighbour, a title match): its first lines
        window = [line for line in lines[start : start + n_lines]]
        while len(window) > 1 and (not window[-1].strip() or window[-1].startswith("#")):
            window.pop()
        hit["start_line"], hit["end_line"] = start + 1, start + max(1, len(window))
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in window)
        if detail == "full":
            hit["tags"] = list(node.tags)
            hit["references"] = list(node.references)
    elif cand.kind in ("code", "doc"):
        lines = cand.text.split("\n") if cand.text else []
        at, _ = proof_window(lines, term_stems, n_lines)
        window = lines[at : at + n_lines]
        start = (cand.start_line or 1) + at
        hit["start_line"], hit["end_line"] = start, start + max(1, len(window)) - 1
        hit["ref"] = f"{cand.path}:{hit['start_line']}-{hit['end_line']}"
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in window)
        if cand.meta.get("symbol"):
            hit["symbol"] = cand.meta["symbol"]
        if detail == "full":
            hit["section"] = {"start_line": cand.start_line, "end_line": cand.end_line,
                              "chunk_type": cand.meta.get("chunk_type")}
    else:
        lines = cand.text.split("\n") if cand.text else []
        at, _ = proof_window(lines, term_stems, n_lines)
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in lines[at : at + n_lines])
        hit["session_id"] = cand.meta.get("session_id")
        if cand.meta.get("turn_start") is not None:
            hit["turns"] = [cand.meta.get("turn_start"), cand.meta.get("turn_end")]
        if cand.meta.get("timestamp"):
            hit["timestamp"] = cand.meta["timestamp"]
    return hit


def _body_start(lines: list[str]) -> int:
    """The first line after the YAML frontmatter (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return i + 1
    return 0
