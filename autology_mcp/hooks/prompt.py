"""UserPromptSubmit: the project memory that grounds the user's prompt, added before the model sees it.

Seed 001's "always retrieve, then decide": every prompt runs unified retrieval (nodes, code, docs,
past sessions). Only an answer the evidence gate grounds is injected (verdict ``grounded``, or
``ambiguous``: grounded evidence in two areas; :mod:`autology_mcp.retrieval.gate`), and only the
items that pass the gate on their own (:func:`chosen_items`): one when one clearly wins, at most
``prompt_max_items``, within ``prompt_max_tokens`` (estimated as characters / 4). Each item is a node
id or ``path:lines``, one proof line, and the query words it matched; decisions, conventions and open
issues come first. Nothing is injected for a weak or no-evidence answer, a slash command, or a
trivial prompt ("yes", "go on"), and an item already told in this session (by this hook, or a node
by the edit hooks) is never injected again (:mod:`autology_mcp.hooks.state`). Every string of the
repository in an item (a title, a proof line, a path or symbol, a commit's subject and files) is quoted
project data; a node whose text addresses the agent with instructions is not injected until a person
reviews it (:mod:`autology_mcp.knowledge.trust.untrusted`). A past session grounds a prompt by what it
answered or did, never by the user having asked the same thing (:mod:`autology_mcp.retrieval.echo`),
and the current session's own turns are not searched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autology_mcp.common.text import (
    keyword_pattern,
    keyword_stem,
    keyword_terms,
    keyword_text,
)
from autology_mcp.hooks.config import load_hooks_config
from autology_mcp.hooks.output import additional_context
from autology_mcp.hooks.project import open_store, project_root
from autology_mcp.hooks.state import session_state, told_nodes
from autology_mcp.knowledge.trust.untrusted import FRAME, held_back, quoted

EVENT = "UserPromptSubmit"
QUERY_CHARS = 2000  # unified retrieval's query limit; a longer prompt is searched by its start
PROOF_CHARS = 160
MIN_PROOF_CHARS = 40  # a proof line cut shorter than this says nothing
RUNNER_UP = 0.95  # an item after the first needs this share of the first's score: else the first clearly wins
NODE_RUNNER_UP = 0.9  # the same for a record after a record, by the node search's score
ALSO_MAX = 3  # records that pass the gate beyond the block: named on one line, at most this many
ALSO_TITLE_CHARS = 60
ALSO = "Also about this, not shown (title, id): "
HELD_BACK = "(held back until a person reviews it: its text addresses the agent)"
GOVERNING = ("decision", "convention", "issue")
# Conversational words that carry no topic: a prompt made only of these (and stop words) is trivial.
TRIVIAL_WORDS = frozenset(
    """yes yeah yep no nope ok okay sure thanks thank thx please continue go proceed do it that this
    sounds good great fine nice cool perfect lgtm next again more same done stop wait right correct
    agreed agree y n k keep going carry on ahead try retry""".split()
)


# Words a request to an assistant wraps its subject in; dropped before searching, since a prompt is not
# a query and these would count as missing terms in the verdict's coverage.
PROMPT_FILLER = frozenset(
    """should could would can shall might must please want wants need needs let lets help tell explain
    think know like just also really maybe perhaps actually kindly""".split()
)
_FILLER = re.compile(r"\b(?:" + "|".join(sorted(PROMPT_FILLER)) + r")\b", re.IGNORECASE)


def prompt_query(prompt: str) -> str:
    """The search query for a prompt: its start, without the words a request is wrapped in."""
    return " ".join(_FILLER.sub(" ", prompt.strip()[:QUERY_CHARS]).split())


def is_trivial(prompt: str) -> bool:
    """True when the prompt names nothing to look up: only stop words and conversational words."""
    return not [t for t in keyword_terms(prompt) if t not in TRIVIAL_WORDS and not t.isdigit()]


def _group(hit: dict[str, Any]) -> int:
    """Decisions, conventions and open issues first, then other nodes, then commits (why the code is as it
    is), then code and docs, then sessions."""
    if hit["kind"] == "node":
        return 0 if hit.get("node_type") in GOVERNING else 1
    return {"commit": 2, "code": 3, "doc": 3}.get(hit["kind"], 4)


def _key(hit: dict[str, Any]) -> str:
    return hit.get("node_id") or hit["ref"]


def _matched_words(terms: list[str], text: str) -> list[str]:
    """The query's terms found in ``text``, to show why a hit is there; a one-letter term (the ``s``
    of "option's") tells the model nothing and is not listed."""
    hay = keyword_text(text)
    return [t for t in terms if len(t) > 1 and keyword_pattern(keyword_stem(t)).search(hay)]


def _item(hit: dict[str, Any], terms: list[str], proof_chars: int = PROOF_CHARS) -> str:
    """One item: what it is and its id or place, then its own text quoted (:func:`quoted`: data, never
    the hook's words), then the prompt's words it holds."""
    if hit.get("held_back"):  # its text addresses the agent: the id alone, as every hook names it
        return f"- [{hit['node_type']}] {hit['node_id']} {HELD_BACK}"
    proof = " ".join((hit.get("snippet") or "").split())
    if hit["kind"] == "node":
        status = "" if hit.get("status") in (None, "active") else f", {hit['status']}"
        head = f"- [{hit['node_type']}{status}] {hit['node_id']}: {quoted(hit['title'] or '')}"
    elif hit["kind"] in ("code", "doc"):  # the path and the symbol's name are the repository's words
        symbol = f" {quoted(hit['symbol'])}" if hit.get("symbol") else ""
        head = f"- {quoted(hit['ref'])}{symbol}"
    elif hit["kind"] == "commit":  # the subject, the date and the files are the repository's words too
        commit = hit.get("commit") or {}
        # the project's files first, its memory records (.autology/) after: the three shown say where the change was
        files = sorted(commit.get("files") or [], key=lambda f: f.startswith(".autology/"))
        head = (f"- commit {hit['ref']} ({(commit.get('date') or '')[:10]}): {quoted(hit['title'] or '')}"
                + (f" — files: {quoted(', '.join(files[:3]) + (' …' if len(files) > 3 else ''))}" if files else ""))
    else:
        head = f"- past session {hit['ref']}: {quoted(hit['title'] or '')}"
    words = _matched_words(terms, f"{hit.get('title') or ''}\n{hit.get('path') or ''}\n{hit.get('snippet') or ''}")
    why = f"matched: {', '.join(words[:6])}" if words else f"via {quoted(hit['via'])}" if hit.get("via") else ""
    return head + (f" — {quoted(proof, proof_chars)}" if proof else "") + (f" — {why}" if why else "")


def _fit(hit: dict[str, Any], terms: list[str], room: int) -> str | None:
    """The item in at most ``room`` characters, its proof line shortened if need be; None if it cannot fit."""
    line = _item(hit, terms)
    if len(line) <= room:
        return line
    proof = min(len(" ".join((hit.get("snippet") or "").split())), PROOF_CHARS)
    shorter = proof - (len(line) - room)
    if shorter < MIN_PROOF_CHARS:
        return None
    line = _item(hit, terms, shorter)
    return line if len(line) <= room else None


def passing_records(hits: list[dict[str, Any]], item_threshold: float) -> list[dict[str, Any]]:
    """The knowledge nodes among ``hits`` that pass the evidence gate on their own, in the answer's order
    (the node search's: one ranking of records), superseded and stale ones left out."""
    return [h for h in hits if h["kind"] == "node" and h.get("status") != "superseded" and not h.get("stale")
            and h["components"].get("support", 0.0) >= item_threshold]


def chosen_items(hits: list[dict[str, Any]], item_threshold: float, max_items: int,
                 node_threshold: float = 0.0, why: bool = False) -> list[dict[str, Any]]:
    """The items worth a slot, each passing the evidence gate on its own (its ``support`` reaches
    ``item_threshold``): when a knowledge node grounds the answer itself (its support reaches
    ``node_threshold``, the gate's threshold), only nodes, the memory the agent cannot grep for; the
    first in the answer's order, and after it only those scoring within :data:`RUNNER_UP` of it: one
    item when one clearly wins, a few when several are as good."""
    passing = [h for h in hits if h.get("status") != "superseded" and not h.get("stale")
               and h["components"].get("support", 0.0) >= item_threshold]
    if any(h["kind"] == "node" and h["components"]["support"] >= node_threshold for h in passing):
        passing = [h for h in passing if h["kind"] == "node"]
    elif why and any(h["kind"] == "commit" and h["components"]["support"] >= node_threshold for h in passing):
        passing = [h for h in passing if h["kind"] == "commit"]  # a why question: the commit that explains
    if not passing:
        return []
    first = passing[0]
    chosen = [first] + [h for h in passing[1:] if _close(h, first)][: max_items - 1]
    records = passing_records(passing, item_threshold)
    if records and records[0] not in chosen:  # the best record that passes is never left out for code
        chosen = [records[0], *chosen[: max_items - 1]]
    return chosen


def _close(hit: dict[str, Any], first: dict[str, Any]) -> bool:
    """Whether ``hit`` is about as good as ``first``: two records by the node search's score
    (:data:`NODE_RUNNER_UP` of the first's), anything else by the answer's (:data:`RUNNER_UP`)."""
    mine, best = hit["components"].get("node_score"), first["components"].get("node_score")
    if mine is not None and best is not None:
        return mine >= NODE_RUNNER_UP * best
    return hit["score"] >= RUNNER_UP * first["score"]


def prompt_block(answer: dict[str, Any], seen: set[str], max_items: int, max_tokens: int,
                 item_threshold: float, node_threshold: float = 0.0) -> tuple[str, list[str]]:
    """The block to inject for a grounded answer, and the keys of the items in it ("" and [] for none)."""
    # A code hit whose file changed since it was indexed may prove nothing any more: left out.
    chosen = [h for h in chosen_items(answer["hits"], item_threshold, max_items, node_threshold,
                                      why=answer.get("intent") == "research") if _key(h) not in seen]
    # decisions, conventions and open issues first; within each group the item most about the subject first
    ranked = sorted(chosen, key=lambda h: (_group(h), -h["components"].get("support", 0.0)))
    if not ranked:
        return "", []
    terms = keyword_terms(answer["query"])
    where = " in two areas" if answer["verdict"] == "ambiguous" else ""
    lines = [f"autology — project memory relevant to this prompt (grounded evidence{where}, best first; {FRAME}):"]
    footer = "More: autology_search / autology_context. Cite these ids and path:lines when you rely on them."
    budget, keys = max_tokens * 4, []
    for hit in ranked:
        line = _fit(hit, terms, budget - len("\n".join(lines)) - 1)
        if line is None:
            break
        lines.append(line)
        keys.append(_key(hit))
    if not keys:
        return "", []
    also = _also(answer["hits"] + answer.get("more_records", []), keys, seen, item_threshold)
    if also and len("\n".join(lines)) + 1 + len(also) <= budget:
        lines.append(also)
    if len("\n".join(lines)) + 1 + len(footer) <= budget:
        lines.append(footer)
    return "\n".join(lines), keys


def _also(hits: list[dict[str, Any]], keys: list[str], seen: set[str], item_threshold: float) -> str:
    """One line naming the records that pass the gate but did not fit the block, by title and id (at
    most :data:`ALSO_MAX`): a few tokens that let the model open them ("" when there are none). The
    hits' records come first, then those the answer lists beyond its hits (``more_records``: commits
    or code took the places, the records still cleared the floor)."""
    named = [h for h in passing_records(hits, item_threshold)
             if _key(h) not in keys and _key(h) not in seen and not h.get("held_back")]  # no title of a held-back node
    if not named:
        return ""
    return ALSO + "; ".join(f"{quoted(h['title'] or '', ALSO_TITLE_CHARS)} {h['node_id']}" for h in named[:ALSO_MAX])


def _held_back(store: Any, hit: dict[str, Any]) -> bool:
    """A node hit whose text addresses the agent with instructions and no person reviewed
    (:mod:`autology_mcp.knowledge.trust.untrusted`): its text is not injected unasked, its id is (:func:`_item`)."""
    if hit["kind"] != "node":
        return False
    node = store.index.get_node(hit["node_id"])
    return node is not None and bool(held_back(store.paths.base, node.id, node.title, node.content))


def user_prompt_submit(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any] | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or prompt.lstrip().startswith("/") or is_trivial(prompt_query(prompt)):
        return None
    root = project_root(payload, root)
    config = load_hooks_config(root)
    if not config.prompt_context:
        return None
    store = open_store(root)
    if store is None:
        return None  # no knowledge graph: this project does not use autology
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    try:
        from autology_mcp.retrieval.engine import search

        # this session's own turns (ingested already when it was resumed, or by a `sessions ingest` run in it)
        # never ground its prompts
        answer = search(root, prompt_query(prompt), limit=10, detail="brief", store=store, refresh_code=False,
                        exclude_session=session_id or None, more_records=ALSO_MAX)
        if answer["verdict"] in ("grounded", "ambiguous"):
            for hit in answer["hits"]:  # keeps its place, named by its id alone (_item): never dropped unsaid
                hit["held_back"] = _held_back(store, hit)
            answer["more_records"] = [h for h in answer.get("more_records", []) if not _held_back(store, h)]
    finally:
        store.close()
    if answer["verdict"] not in ("grounded", "ambiguous"):
        return None
    from autology_mcp.retrieval.config import project_configs

    with session_state(root, session_id) as state:
        seen = told_nodes(state)
        gate = project_configs(root)[0]
        text, keys = prompt_block(answer, seen, config.prompt_max_items, config.prompt_max_tokens,
                                  gate.gate_item_threshold, gate.gate_threshold)
        if not keys:
            return None
        state["prompt"] = state.get("prompt", []) + keys
    return additional_context(EVENT, text)
