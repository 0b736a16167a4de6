"""Unified retrieval: one always-on search over knowledge nodes, code, docs and past sessions.

    channels → fuse → expand → score → diversify → verdict → budget

:func:`search` runs the steps in that order; each is one function below, named for its step. The
steps share one :class:`Search` (the query, what the channels found, the scores so far), and each
adds its milliseconds to the trace.

Every query runs every channel of its scope (the intent only weights them), the answer always says
what it found and how (``trace``), and it always fits ``max_tokens``. See docs/retrieval.md.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.common.query_text import without_boilerplate
from autology_mcp.common.text import code_identifiers, keyword_coverage, keyword_stem, keyword_terms
from autology_mcp.knowledge.store import NodeStore
from autology_mcp.retrieval import budget as budget_mod
from autology_mcp.retrieval import channels as ch
from autology_mcp.retrieval import echo, expand, gate, scoring
from autology_mcp.retrieval.candidates import Candidate
from autology_mcp.retrieval.cards import card
from autology_mcp.retrieval.config import RetrievalConfig, project_configs
from autology_mcp.retrieval.fusion import location_similarity, mmr, rrf
from autology_mcp.retrieval.history_prior import file_prior
from autology_mcp.retrieval.intent import Intent, asks_where, classify_intent
from autology_mcp.retrieval.options import DETAILS, LIMIT_MAX, QUERY_MAX, SCOPES
from autology_mcp.retrieval.verdict import decide



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
    refresh_code: bool = True,
    exclude_session: str | None = None,
    more_records: int = 0,
) -> dict:
    """Search every source in ``scope`` (None: all) and return a JSON-ready answer: ``query, intent,
    verdict, clarifying_question, guidance, hits, cut, trace`` (see docs/retrieval.md).

    ``refresh_code=False`` searches the code index as it is, without first re-indexing changed files
    (a hook cannot spend ~0.1 s on it per process); code and doc hits whose file changed since it was
    indexed then say ``"stale": true``. ``exclude_session``: a session id whose own turns are not searched
    (the prompt hook's: a session never grounds on itself, issue 38). ``more_records``: also list, as
    ``more_records``, up to this many records that cleared the similarity floor but got no place among
    the hits, in the node search's order, each with its gate support (the prompt hook names them).

    channels → fuse → expand → score → diversify → verdict (in :func:`run`), then the budget."""
    answer, max_tokens, counter = run(
        root, query, scope=scope, limit=limit, max_tokens=max_tokens, detail=detail, store=store,
        module_hint=module_hint, refresh_code=refresh_code, exclude_session=exclude_session,
        more_records=more_records,
    )
    beyond = answer.pop("more_records", None)  # for the caller (the prompt hook), not part of the budget's answer
    answer = budget_mod.fit(answer, max_tokens, compact_trace, counter)
    if beyond is not None:
        answer["more_records"] = beyond
    return answer


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
    refresh_code: bool = True,
    exclude_session: str | None = None,
    more_records: int = 0,
):
    """The answer before the budget is applied, the validated budget, and the token counter."""
    root = Path(root).resolve()
    cfg, index_cfg = project_configs(root)
    query, scopes, limit, max_tokens = _validate(query, scope, limit, max_tokens, detail, cfg)
    own_store = store is None
    if own_store and "nodes" in scopes:
        store = open_store(root)
    try:
        answer = _search(root, query, scopes, limit, detail, store, cfg, index_cfg, module_hint, refresh_code,
                         exclude_session, more_records)
    finally:
        if own_store and store is not None:
            store.close()
    counter, _ = budget_mod.token_counter(cfg.tokenizer)
    return answer, max_tokens, counter


def open_store(root: Path) -> NodeStore:
    """The project's node store, brought in step with the files (for callers without a server)."""
    store = NodeStore(root)
    store.init()
    store.refresh()
    return store


@dataclass
class Search:
    """One search as it goes through the steps."""

    root: Path
    query: str
    scopes: set[str]
    limit: int
    detail: str
    store: NodeStore | None
    cfg: RetrievalConfig
    module_hint: str | None
    intent: Intent
    text_query: str  # the query and the module hint: what the code and session channels search for
    # the same without the credits and pull-request numbers a change description carries (issue 37): what
    # the node channels rank and the evidence gate weighs (code search keeps the query as written)
    record_query: str
    terms: list[str]  # its keyword terms
    term_stems: list[str]
    weights: dict[str, float]
    refresh_code: bool = True
    exclude_session: str | None = None  # a session whose turns are not searched (the current one, in a hook)
    more_records: int = 0  # records beyond the hits to list (:func:`records_beyond`)
    timings: dict[str, float] = field(default_factory=dict)
    # channels
    pool: ch.Pool = field(default_factory=ch.Pool)
    runs: list[ch.ChannelRun] = field(default_factory=list)
    freshness: dict[str, Any] = field(default_factory=dict)
    code_index: tuple | None = None  # where the code index lives, when code or docs are in scope
    file_prior: dict[str, float] = field(default_factory=dict)  # path -> the history prior, 0 to 1
    # fuse, expand
    fused: dict[str, float] = field(default_factory=dict)
    superseded: list[dict] = field(default_factory=list)
    graph_ranking: list[str] = field(default_factory=list)
    # score
    shortlist: list[str] = field(default_factory=list)
    scored: dict[str, dict[str, float]] = field(default_factory=dict)
    # diversify
    evidence: list[str] = field(default_factory=list)
    below_floor: int = 0
    chosen_pool: list[str] = field(default_factory=list)
    passing: list[str] = field(default_factory=list)  # what clears the floor, before the limit cuts it
    order: list[str] = field(default_factory=list)
    beyond: list[str] = field(default_factory=list)  # records that cleared the floor with no place in ``order``
    # gate
    subject: gate.Subject | None = None

    @contextmanager
    def timed(self, step: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        self.timings[step] = (time.perf_counter() - t) * 1000


def _search(root, query, scopes, limit, detail, store, cfg, index_cfg, module_hint, refresh_code=True,
            exclude_session=None, more_records=0) -> dict:
    t_start = time.perf_counter()
    text_query = query + (" " + module_hint if module_hint else "")
    intent = classify_intent(query)
    terms = keyword_terms(text_query)
    s = Search(
        root=root, query=query, scopes=scopes, limit=limit, detail=detail, store=store, cfg=cfg,
        module_hint=module_hint, intent=intent, text_query=text_query, terms=terms,
        record_query=without_boilerplate(query) + (" " + module_hint if module_hint else ""),
        term_stems=list(dict.fromkeys(keyword_stem(t) for t in terms)),
        weights=intent.channel_weights(cfg.channel_weights),
        refresh_code=refresh_code, exclude_session=exclude_session, more_records=more_records,
    )
    with s.timed("channels"):
        run_channels(s, index_cfg)
    with s.timed("fusion"):
        fuse(s)
    with s.timed("expand"):
        expand_graph(s)
    with s.timed("score"):
        score(s)
    with s.timed("mmr"):
        diversify(s)
        order_code(s)
        order_records(s)
    with s.timed("gate"):
        weigh_evidence(s)
    with s.timed("spans"):
        hits, verdict = cards_and_verdict(s)
    s.timings["total"] = (time.perf_counter() - t_start) * 1000
    return _answer(s, hits, verdict)


def run_channels(s: Search, index_cfg) -> None:
    """Every channel of the scope. The node channels and the history channel run in worker threads while
    this one runs the code channels: all spend much of their time inside SQLite, which releases the GIL."""
    cfg = s.cfg
    if "code" in s.scopes or "docs" in s.scopes:
        s.code_index = ch.index_location(s.root, index_cfg)
    history_job = None
    wants_prior = "code" in s.scopes and cfg.history_prior > 0  # the commits vote for the files they touched
    if "history" in s.scopes or wants_prior:  # the commits, in a worker thread too (SQLite releases the GIL)
        size = max(cfg.pool, cfg.history_prior_commits) if wants_prior else cfg.pool
        history_job = _executor().submit(ch.history_channel, s.root, s.record_query, ch.Pool(), size,
                                         not s.refresh_code)  # refresh_code=False: a hook's search
    node_job = None
    if "nodes" in s.scopes:
        node_job = _executor().submit(ch.node_channels, s.store, s.record_query, keyword_terms(s.record_query), ch.Pool(),
                                      cfg.node_pool)
    code_pool = ch.Pool()
    if s.code_index is not None:
        code_runs, code_fresh = ch.code_channels(
            s.root, s.text_query, code_pool, cfg.pool, cfg.refresh_interval_s if s.refresh_code else None,
            "code" in s.scopes, "docs" in s.scopes,
            s.code_index, cfg.file_share, want_files=max(s.limit, 10),
        )
        s.freshness["code_index"] = code_fresh.as_dict()
        if code_fresh.read_location is not None:  # a new branch: another branch's index was read
            s.code_index = (s.code_index[0], code_fresh.read_location)
    else:
        code_runs = [ch.ChannelRun(n, "out_of_scope") for n in ("code_bm25", "symbols", "paths", "vectors")]
    if node_job is not None:
        node_runs, node_pool = node_job.result()
        s.runs += node_runs
        s.pool.items.update(node_pool.items)
        s.freshness["nodes"] = {"generation": s.store.index.generation(), "nodes": s.store.index.count()}
    else:
        s.runs += [ch.ChannelRun("node_bm25", "out_of_scope"), ch.ChannelRun("node_title_tags", "out_of_scope")]
    s.runs += code_runs
    s.pool.items.update(code_pool.items)
    if "sessions" in s.scopes:
        s.runs.append(ch.sessions_channel(s.root, s.text_query, s.pool, cfg.pool, s.exclude_session))
        s.freshness["sessions"] = s.runs[-1].status
    else:
        s.runs.append(ch.ChannelRun("sessions", "out_of_scope"))
    if history_job is not None:
        run, fresh, commits, votes = history_job.result()
        if wants_prior:  # the commits' messages vote (their changed words lowered code ranking on the tuning parts)
            s.file_prior = file_prior(votes, cfg.history_prior_commits)
    if "history" in s.scopes:
        s.freshness["history"] = fresh
        run.ranking = run.ranking[:cfg.pool]
        s.runs.append(run)
        s.pool.items.update((k, commits.items[k]) for k in run.ranking)
    else:
        s.runs.append(ch.ChannelRun("history", "out_of_scope"))


def fuse(s: Search) -> None:
    """Reciprocal Rank Fusion of the channels' rankings; each candidate records the channels that found it."""
    rankings = {r.name: r.ranking for r in s.runs if r.ranking}
    s.fused = rrf(rankings, s.weights, s.cfg.rrf_k)
    found_by: dict[str, list[str]] = {}
    for r in s.runs:
        for key in r.ranking:
            found_by.setdefault(key, []).append(r.name)
    for key, names in found_by.items():
        if key in s.pool.items:
            s.pool.items[key].meta["channels"] = names


def expand_graph(s: Search) -> None:
    """Superseded nodes replaced by their successors, then credit to graph neighbours and to the
    nodes whose references point at a code hit."""
    if "nodes" not in s.scopes or s.store is None:
        return
    store, pool, cfg = s.store, s.pool, s.cfg
    s.superseded = expand.apply_supersession(store, pool, s.fused)
    gw = s.weights.get("graph", 0.5)
    credits = expand.neighbour_credits(store, pool, s.fused, cfg, gw)
    credits += expand.reference_credits(store, pool, s.fused, cfg, gw)
    s.graph_ranking = expand.apply_credits(store, pool, s.fused, credits)
    for key in s.graph_ranking:
        pool.items[key].meta.setdefault("channels", [])
        if "graph" not in pool.items[key].meta["channels"]:
            pool.items[key].meta["channels"].append("graph")


NO_EXACT = (False, 0.0)  # a code or doc hit's exact evidence (channels.code_channels) when it has none


def score(s: Search) -> None:
    """The blend ``priority, similarity, keyword`` of the best fused candidates (the shortlist)."""
    pool, cfg = s.pool, s.cfg
    ranked = sorted((k for k in s.fused if k in pool.items), key=lambda k: (-s.fused[k], k))
    s.shortlist = shortlist(ranked, pool, max(s.limit * 3, 30), max(s.limit, 10))
    missing_text = {pool.items[k].meta["rowid"]: k for k in s.shortlist if not pool.items[k].text and k.startswith("chunk:")}
    if missing_text:
        for rowid, text in ch.load_chunk_texts(s.code_index[1], list(missing_text)).items():
            pool.items[missing_text[rowid]].text = text
    qvec = scoring.query_vector(s.text_query)
    matched = {key: scoring.keyword(s.term_stems, pool.items[key])[1] for key in s.shortlist}
    term_weights = scoring.term_weights(s.term_stems, matched.values(), cfg.keyword_idf)
    index_counts = s.weights.get("code_bm25", 1.0) > 0  # the channel that carries the index's own ranking
    # A lookup of a name (the name alone, or where it is): the history prior orders only the code and doc hits
    # with the best exact evidence among them, defining the name, then holding as many of the query's
    # identifiers whole; votes of commits like the query never lift a file over the code that defines or holds
    # the name looked up. A change that names things ("Fix `retry` merging") keeps the prior on every hit: the
    # file a change touches is often one that uses the name, which is what the prior knows.
    most_exact = NO_EXACT
    if asks_where(s.query, s.intent, code_identifiers(s.query)):
        most_exact = max((pool.items[k].meta.get("exact", NO_EXACT) for k in s.shortlist
                          if pool.items[k].kind in ("code", "doc")), default=NO_EXACT)
    for key in s.shortlist:
        cand = pool.items[key]
        kw = scoring.weighted_share(matched[key], term_weights)
        cos = scoring.cosine(qvec, cand) if cand.kind in ("node", "session_chunk", "handoff", "commit") else (cand.cosine or 0.0)
        index_relative = cand.meta.get("index_relative") if index_counts else None
        sim = scoring.similarity(s.fused[key], cos, cand.kind, s.weights, cfg.rrf_k, scoring.rank_share(cand, cfg),
                                 index_relative)
        pri = scoring.priority(cand, cfg, s.intent)
        if s.module_hint and _in_module(cand, s.module_hint):
            pri = min(1.0, pri * 1.15)
        blended = scoring.blend(pri, sim, kw, cfg)
        s.scored[key] = {
            "priority": round(pri, 4),
            "similarity": round(sim, 4),
            "keyword": round(kw, 4),
            "rrf": round(s.fused[key], 6),
            "score": round(blended, 4),
        }
        # the order: the score, and for code and docs the history prior (issue 41: history_prior.py), which
        # orders the hits without changing the score the verdict and the hooks read
        prior = s.file_prior.get(cand.path) if cand.kind in ("code", "doc") and \
            cand.meta.get("exact", NO_EXACT) >= most_exact else None
        s.scored[key]["rank"] = round(blended + cfg.history_prior * (prior or 0.0), 4)
        if prior:
            s.scored[key]["history_prior"] = round(prior, 4)
        if cand.meta.get("node_score") is not None:
            s.scored[key]["node_score"] = cand.meta["node_score"]


FAMILIES = {"node": "knowledge", "code": "code", "doc": "code", "session_chunk": "sessions", "handoff": "sessions",
            "commit": "history"}


def shortlist(ranked: list[str], pool: ch.Pool, size: int, per_family: int) -> list[str]:
    """What is scored: the best ``size`` candidates by fused rank, and the best ``per_family`` of each
    source family (knowledge, code and docs, sessions) even below that.

    RRF adds up a candidate's ranks over the channels that found it, and a code chunk is found by up
    to four channels (BM25, symbols, paths, vectors) where a node is found by two: by fused rank
    alone, code fills the shortlist and a decision that answers the question is never scored (on
    BrighterCommand/Brighter's ADRs, the right record fell out of the top 10 for most queries once
    the code was indexed: bench/mixed_store_eval.py). The blend score then ranks the shortlist."""
    chosen = ranked[:size]
    counts: dict[str, int] = {}
    files: set[str] = set()  # code and docs count by file: a file is one hit (one_per_file)

    def count(key: str) -> None:
        cand = pool.items[key]
        family = FAMILIES.get(cand.kind, "other")
        if family == "code":
            if cand.path in files:
                return
            files.add(cand.path)
        counts[family] = counts.get(family, 0) + 1

    for key in chosen:
        count(key)
    for key in ranked[size:]:
        cand = pool.items[key]
        family = FAMILIES.get(cand.kind, "other")
        if counts.get(family, 0) < per_family and not (family == "code" and cand.path in files):
            chosen.append(key)
            count(key)
    return chosen


def diversify(s: Search, by: str = "score") -> None:
    """The evidence, one hit per file, re-ranked by MMR for diversity, cut to the limit: first what
    clears the similarity floor, then, when that is fewer than the limit, the best of the rest; ranked
    ``by`` the score (or the ``rank``: the score with the history prior, :func:`order_code`).

    Evidence is something of the query in the text, or reached through the graph from evidence. The
    floor applies to direct evidence; a node the graph brought in (neighbour, referencing node,
    successor) passes when a hit it came from passes."""
    pool, scored, floor = s.pool, s.scored, s.cfg.similarity_floor
    # A code or doc chunk whose file path holds a query term is evidence too ("fix a typo in wsgi.py"
    # is about .../wsgi.py): it can fill the list below the floor, it does not rank by it.
    s.evidence = [k for k in s.shortlist if scored[k]["keyword"] > 0 or pool.items[k].via or _path_matches(s, pool.items[k])
                  or _lexical_match(pool.items[k])]
    direct_above = {k for k in s.evidence if scored[k]["similarity"] >= floor and scored[k]["keyword"] > 0}

    def passes(key: str) -> bool:
        cand = pool.items[key]
        if key in direct_above:
            return True
        if not cand.via:
            return False
        if cand.meta.get("supersedes_chain"):  # a successor stands in for the hit it replaced
            return scored[key]["similarity"] >= floor or scored[key]["keyword"] > 0
        return any(parent in direct_above for parent in cand.meta.get("graph_parents", []))

    # A file's hit is its best chunk, preferring one that holds most of the query's words (grounded
    # evidence, which the verdict looks for) over one that scores higher on the blend with fewer.
    strong = s.cfg.grounded_min_keyword
    above = one_per_file(
        sorted((k for k in s.evidence if passes(k)), key=lambda k: (scored[k]["keyword"] <= strong, -scored[k][by], k)),
        pool,
    )
    below = one_per_file(sorted((k for k in s.evidence if not passes(k)), key=lambda k: (-scored[k][by], k)), pool,
                         taken={pool.items[k].path for k in above})
    s.below_floor = len(below)
    s.passing = above
    s.chosen_pool = above + below[: max(0, s.limit - len(above))]
    file_best: dict[str, float] = {}  # a file ranks by its best chunk, whichever chunk stands for it
    for k in s.evidence:
        cand = pool.items[k]
        if cand.kind in ("code", "doc"):
            file_best[cand.path] = max(file_best.get(cand.path, 0.0), scored[k][by])
    relevance = {k: file_best.get(pool.items[k].path, scored[k][by]) if pool.items[k].kind in ("code", "doc")
                 else scored[k][by] for k in above + below}

    def diversity(a: str, b: str) -> float:
        ca, cb = pool.items[a], pool.items[b]
        return location_similarity(ca.tree, cb.tree, ca.kind == cb.kind)

    def ranked(keys: list[str], limit: int) -> list[str]:
        by_score = sorted(keys, key=lambda k: (-relevance[k], k))
        return mmr(by_score, relevance, diversity, s.cfg.mmr_lambda, limit)

    # The floor orders, it does not starve: the hits that clear it come first, and when fewer than
    # ``limit`` do, the best of the rest fill the list (a list BM25 would fill is never cut short).
    s.order = ranked(above, s.limit)
    s.order += ranked(below, s.limit - len(s.order))


def order_code(s: Search) -> None:
    """Code and doc hits in the order the history prior gives them (issue 41:
    :mod:`autology_mcp.retrieval.history_prior`), in the places of the list the score gave to code and
    docs: the prior orders files among themselves, it never lifts a file over a record, a commit or a
    session."""
    if not s.file_prior or s.cfg.history_prior <= 0:
        return
    by_score = s.order
    diversify(s, by="rank")
    is_code = {k: s.pool.items[k].kind in ("code", "doc") for k in set(by_score) | set(s.order)}
    files = [k for k in s.order if is_code[k]]
    files += [k for k in by_score if is_code[k] and k not in files]
    places = [i for i, k in enumerate(by_score) if is_code[k]]
    s.order = list(by_score)
    for place, key in zip(places, files):
        s.order[place] = key


def _node_search_rank(s: Search) -> dict[str, int]:
    """Each record's place in the node search's ranking (the ``node_bm25`` channel's)."""
    ranking = next((r.ranking for r in s.runs if r.name == "node_bm25"), [])
    return {key: i for i, key in enumerate(ranking)}


def order_records(s: Search) -> None:
    """Knowledge nodes in the node search's order (``autology_query``'s, the ``node_bm25`` channel), in
    the places of the list the blend gave to nodes: one ranking of records everywhere (issue 37). The
    records that fill those places are the best the node search ranked among the nodes that clear the
    similarity floor, not only those the blend kept within the limit: a record the node search puts
    first is never cut because code and commits outscored it on the blend's words ("adding
    typing_extensions.TypeIs. Patch by Jelle Zijlstra" lost "Narrowing types with TypeIs" that way). A
    node that channel did not rank (found by its title and tags alone, or brought in by the graph)
    follows the ranked ones, in the blend's order. A commit never comes before a record: they share
    their places, the records first."""
    rank = _node_search_rank(s)
    places = [i for i, key in enumerate(s.order) if s.pool.items[key].kind == "node"]
    if not places:
        return
    shown = [s.order[i] for i in places]
    worst = max(rank.get(key, len(rank)) for key in shown)
    waiting = [key for key in s.passing if key not in shown and s.pool.items[key].kind == "node"
               and rank.get(key, len(rank)) < worst]
    listed = shown + waiting  # the blend's order, the waiting ones after: ties in the node search's rank keep it
    records = sorted(listed, key=lambda key: (rank.get(key, len(rank)), listed.index(key)))
    for place, key in zip(places, records):
        s.order[place] = key
    # a record before a commit ("why" prompts prefer a decision, then the commit that explains it; issue 41):
    # in the places the blend gave to records and commits, the records first, each kind in its own order
    places = [i for i, key in enumerate(s.order) if s.pool.items[key].kind in ("node", "commit")]
    ranked = sorted((s.order[i] for i in places), key=lambda key: s.pool.items[key].kind != "node")
    for place, key in zip(places, ranked):
        s.order[place] = key


def records_beyond(s: Search) -> list[str]:
    """Up to ``s.more_records`` records that cleared the similarity floor but got no place among the
    hits (commits or code took the places the blend gave), best by the node search first: what the
    prompt hook may still name by title and id (issue 37)."""
    if s.more_records <= 0:
        return []
    rank = _node_search_rank(s)
    shown = set(s.order)
    waiting = [key for key in s.passing if key not in shown and s.pool.items[key].kind == "node"]
    return sorted(waiting, key=lambda key: (rank.get(key, len(rank)), waiting.index(key)))[: s.more_records]


# Every chunk these channels return matched the full-text index on a query word (the vectors and
# symbol-name rankings re-rank the BM25 candidates; the exact channel looks symbols up by name).
LEXICAL_CODE_CHANNELS = frozenset({"code_bm25", "vectors", "symbols"})


def _lexical_match(cand: Candidate) -> bool:
    """A code or doc chunk the full-text index matched is evidence, even when the keyword check's
    lighter stemming finds none of the query's words in it (FTS5's Porter stemmer matched
    "general" in "generated"): the list is never shorter than the one BM25 would fill."""
    return cand.kind in ("code", "doc") and not LEXICAL_CODE_CHANNELS.isdisjoint(cand.meta.get("channels", ()))


def _path_matches(s: Search, cand: Candidate) -> bool:
    return bool(cand.path and cand.kind in ("code", "doc") and keyword_coverage(s.term_stems, cand.path)[0] > 0)


def one_per_file(keys: list[str], pool: ch.Pool, taken: set[str | None] | None = None) -> list[str]:
    """``keys`` with only the first code or doc chunk of each file (none of a file in ``taken``): a
    file is one hit, so ``limit`` hits are ``limit`` files when that many match."""
    seen = set(taken or ())
    kept = []
    for key in keys:
        cand = pool.items[key]
        if cand.kind in ("code", "doc"):
            if cand.path in seen:
                continue
            seen.add(cand.path)
        kept.append(key)
    return kept


def weigh_evidence(s: Search) -> None:
    """The evidence gate (:mod:`autology_mcp.retrieval.gate`): the query's subject, weighed by the
    memory in scope, and how much of it each hit holds (``coverage``, ``title_coverage``) and how
    likely the hit is about it (``support``); a session hit is weighed without the user's pieces that
    only repeat the query (:mod:`autology_mcp.retrieval.echo`). A node the graph brought in (a neighbour
    of a hit, a decision referencing a code hit) also gets ``via_support``, the best support of the hits it came
    from: it is about the subject through them, not by its own words."""
    terms = gate.subject_terms(s.record_query)
    sessions = "sessions" in s.scopes and any(r.name == "sessions" and r.status == "ok" for r in s.runs)
    df = ch.document_counts(s.root, terms, s.store if "nodes" in s.scopes else None, s.code_index, sessions,
                            (s.freshness.get("history") or {}).get("head"))
    s.subject = gate.subject(terms, df, sum(df.values()))

    query_stems = echo.content_stems(s.record_query)

    def weigh(key: str) -> float:
        got = s.scored[key]
        if "support" not in got:
            cand = s.pool.items[key]
            text, label = cand.text, _label(cand)
            if cand.kind in ("session_chunk", "handoff"):  # the user's earlier copies of the query are no evidence
                weighed = echo.without_echoes(s.subject, query_stems, cand.kind, cand.title, cand.text)
                text, label = weighed.text, weighed.title
                if weighed.echoes:
                    cand.meta["evidence_text"] = weighed.proof  # the proof lines: what it answered, not the question
            text_coverage = gate.coverage(s.subject, text)
            title_coverage = gate.coverage(s.subject, label)
            got["coverage"] = text_coverage  # rounded on the card: the gate compares the numbers themselves
            got["title_coverage"] = title_coverage
            got["support"] = gate.support(text_coverage, title_coverage, s.subject.unknown_share)
        return got["support"]

    s.beyond = records_beyond(s)
    for key in s.beyond:
        weigh(key)
    for key in s.order:
        weigh(key)
        parents = [p for p in s.pool.items[key].meta.get("graph_parents", []) if p in s.scored]
        if s.pool.items[key].via and parents:
            s.scored[key]["via_support"] = max(weigh(p) for p in parents)


def _label(cand: Candidate) -> str:
    """What names a hit: a node's title and tags, a chunk's path and symbol, a session's title."""
    if cand.node is not None:
        return f"{cand.node.title}\n{' '.join(cand.node.tags)}"
    if cand.kind in ("code", "doc"):
        return f"{cand.path or ''}\n{cand.meta.get('symbol') or ''}"
    if cand.kind == "commit":  # its subject, and the files it touched
        return f"{cand.title or ''}\n{' '.join(cand.meta.get('files') or [])}"
    return cand.title or ""


def cards_and_verdict(s: Search):
    """Each chosen hit as an evidence card on its proof lines, and the verdict on them."""
    hits = [card(s.pool.items[k], s.scored[k], s.term_stems, s.detail, s.store, s.root) for k in s.order]
    code_index = s.freshness.get("code_index")
    if code_index is not None and code_index.get("checked") != "refreshed":  # the index may lag the files
        stale = ch.stale_paths(s.code_index, [h["path"] for h in hits if h["kind"] in ("code", "doc")])
        for hit in hits:
            if hit["kind"] in ("code", "doc") and hit["path"] in stale:
                hit["stale"] = True
    verdict = decide(s.query, s.intent, hits, [s.pool.items[k] for k in s.order], scored_keys=s.order, scored=s.scored,
                     cfg=s.cfg, freshness=s.freshness, scopes=s.scopes, subject=s.subject)
    return hits, verdict


def _answer(s: Search, hits: list[dict], verdict) -> dict:
    """The answer: the verdict, the hits and the trace of how they were found."""
    pool, cfg, runs = s.pool, s.cfg, s.runs
    trace = {
        "intent": {"name": s.intent.name, "cues": list(s.intent.cues)[:8]},
        "scope": sorted(s.scopes),
        "channels": [
            {"name": r.name, "status": r.status, "candidates": len(r.ranking), "ms": round(r.ms, 2)}
            | ({"note": r.note} if r.note else {})
            for r in runs
        ]
        + [{"name": "graph", "status": "ok" if s.graph_ranking else "empty", "candidates": len(s.graph_ranking)}],
        "fusion": {
            "k": cfg.rrf_k,
            "weights": {k: round(v, 3) for k, v in s.weights.items()},
            "inputs": {r.name: [pool.items[k].ref for k in r.ranking[:5] if k in pool.items] for r in runs if r.ranking}
            | ({"graph": [pool.items[k].ref for k in s.graph_ranking[:5]]} if s.graph_ranking else {}),
            "fused": len(s.fused),
            "shortlist": len(s.shortlist),
            "evidence": len(s.evidence),
            "below_floor": s.below_floor,
            "superseded_replaced": s.superseded,
        },
        "floor": cfg.similarity_floor,
        "gate": _gate_trace(s),
        "freshness": s.freshness,
        "timings_ms": {k: round(v, 2) for k, v in s.timings.items()},
    }
    trace["tokenizer"] = budget_mod.token_counter(cfg.tokenizer)[1]
    answer = {
        "query": s.query,
        "intent": s.intent.name,
        "verdict": verdict.verdict,
        "clarifying_question": verdict.question,
        "guidance": verdict.guidance,
        "hits": hits,
        "cut": {"beyond_limit": max(0, len(s.chosen_pool) - len(hits))},
        "trace": trace,
    }
    if s.more_records > 0:
        answer["more_records"] = [_record_beyond(s, key) for key in s.beyond]
    if s.detail == "brief":
        answer["trace"] = compact_trace(trace, "compact")
    return answer


def _record_beyond(s: Search, key: str) -> dict[str, Any]:
    """A record beyond the hits, as much of a hit as naming it needs."""
    node, got = s.pool.items[key].node, s.scored[key]
    return {"kind": "node", "node_id": node.id, "title": node.title, "node_type": node.type.value,
            "status": node.status.value, "components": {"support": got.get("support", 0.0),
                                                       "node_score": got.get("node_score")}}


def _gate_trace(s: Search) -> dict[str, Any]:
    """The evidence gate in the trace: the answer's confidence (its best hit's support), the thresholds,
    and the query's words the memory in scope never mentions."""
    support = [s.scored[k]["support"] for k in s.order if "support" in s.scored[k]]
    return {
        "confidence": round(max(support, default=0.0), 4),
        "threshold": s.cfg.gate_threshold,
        "item_threshold": s.cfg.gate_item_threshold,
        "unknown": list(s.subject.unknown[:8]) if s.subject else [],
        "unknown_share": round(s.subject.unknown_share, 4) if s.subject else 0.0,
    }


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
        out["freshness"] = {"code_index": (code.get("checked") if code.get("exists") or code.get("checked") == "building"
                                           else "missing")} if isinstance(code, dict) else {}
        out["timings_ms"] = {"total": out.get("timings_ms", {}).get("total", 0.0)}
        if isinstance(out.get("gate"), dict):
            out["gate"] = {k: out["gate"][k] for k in ("confidence", "threshold") if k in out["gate"]}
        for key in ("tokenizer", "scope", "floor"):
            out.pop(key, None)
    out["fusion"] = fusion
    return out
