"""The verdict on every answer, decided from the evidence alone:

- ``grounded``: at least one hit clears the similarity floor, contains more than
  ``grounded_min_keyword`` (default half) of the query's terms, and has a proof span (its snippet
  lines contain a query term);
- ``ambiguous``: the grounded hits of the best hit's family (nodes, or files) form clusters in
  different areas (a node's tags, or its type when one of two is untagged; folder trees), the best
  hit of the second cluster scores within ``ambiguity_margin`` of the first, and the second cluster
  weighs at least ``ambiguity_mass`` of the first (sum of its hits' scores): two competing bodies
  of evidence, not one answer and a stray hit. The answer carries a clarifying question naming
  both areas;
- ``weak``: there are hits with query terms in them, but none is grounded (or the query has only
  stop words, which match by accident);
- ``no_evidence``: nothing of the query was found; the answer says so and tells how to record it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autology_mcp.common.text import NODE_STOP_WORDS, keyword_coverage, keyword_stem, keyword_terms, node_query_terms
from autology_mcp.retrieval.candidates import Candidate
from autology_mcp.retrieval.config import RetrievalConfig
from autology_mcp.retrieval.intent import Intent

VERDICTS = ("grounded", "weak", "ambiguous", "no_evidence")


@dataclass(frozen=True)
class Verdict:
    verdict: str
    question: str | None = None
    guidance: str | None = None


def _subject(query: str) -> str:
    text = " ".join(query.split())
    return text if len(text) <= 80 else text[:77] + "..."


def _family(c: Candidate) -> str:
    return "node" if c.node is not None else "session" if c.kind in ("session_chunk", "handoff") else "file"


def _same_area(a: Candidate, b: Candidate) -> bool:
    """Two nodes are in one area when they share a tag or, unless both are tagged, are of one type
    (an untagged decision and a tagged one are not two areas: no tag tells them apart)."""
    if a.node is not None and b.node is not None:
        if a.node.tags and b.node.tags:
            return bool(set(a.node.tags) & set(b.node.tags))
        return a.node.type == b.node.type
    return a.area_label == b.area_label


def _area_names(a: Candidate, b: Candidate) -> tuple[str, str]:
    """How the clarifying question names two areas: two nodes of different types, one of them
    untagged, differ by type, so both are named by it ("concepts", "decisions"), not one by its tag."""
    if a.node is not None and b.node is not None and not (a.node.tags and b.node.tags):
        return f"{a.node.type.value}s", f"{b.node.type.value}s"
    return a.area_label, b.area_label


def only_common_words(query: str) -> bool:
    """True when every word of the query is a stop word ("the of and", "a")."""
    words = node_query_terms(query)
    return bool(words) and all(w in NODE_STOP_WORDS for w in words)


def _capture_hint(subject: str) -> str:
    quoted = subject.replace('"', "'")
    return (
        f'capture one with `autology capture "{quoted}" --type decision -f -` (sections ## Context, ## Decision, '
        f"## Alternatives, ## Consequences), or the MCP tool autology_capture with type \"decision\""
    )


def code_unsearched(code_index: dict[str, Any] | None, scopes: set[str]) -> bool:
    """Whether code or docs were asked for and not searched: no index yet (missing, or its first
    build running), or a rebuild with no previous build to read."""
    if code_index is None or not scopes & {"code", "docs"}:
        return False
    return not code_index.get("exists", True) or (code_index.get("checked") == "rebuilding"
                                                  and code_index.get("previous_build") is False)


def decide(
    query: str,
    intent: Intent,
    hits: list[dict[str, Any]],
    cands: list[Candidate],
    *,
    scored_keys: list[str],
    scored: dict[str, dict[str, float]],
    cfg: RetrievalConfig,
    freshness: dict[str, Any],
    scopes: set[str],
) -> Verdict:
    subject = _subject(query)
    term_stems = list(dict.fromkeys(keyword_stem(t) for t in keyword_terms(query)))
    notes = []
    code_index = freshness.get("code_index")
    if code_index is not None and not code_index.get("exists", True) and code_index.get("checked") != "building":
        notes.append("The repository index does not exist yet, so code and docs were not searched: run "
                     "`autology index build` (or the autology_index tool with action \"build\").")
    elif code_index is not None and (code_index.get("checked") in ("rebuilding", "building", "updating") or code_index.get("read_from")):
        note = code_index.get("note") or "the code index is being rebuilt"
        notes.append(note[0].upper() + note[1:] + ".")
    direct = [(h, c, k) for h, c, k in zip(hits, cands, scored_keys) if scored[k]["keyword"] > 0]
    if direct and only_common_words(query):
        guidance = (f'"{subject}" has only very common words, so the hits match it by accident: say what you are '
                    "looking for (a component, a file, a symbol, a decision).")
        return Verdict("weak", None, " ".join([guidance] + notes))
    if not direct:
        if code_unsearched(code_index, scopes):  # the answer may be in the code: no push to record one yet
            guidance = (f'Nothing in the knowledge or past sessions mentions "{subject}"; search again once the code '
                        "index is ready, before recording anything.")
            return Verdict("no_evidence", None, " ".join([guidance] + notes))
        what = "decision" if intent.name in ("research", "general", "doc_lookup") else "knowledge"
        guidance = f'No {what} is recorded about "{subject}" and nothing in the searched sources mentions it; ' \
                   f"{_capture_hint(subject)}."
        return Verdict("no_evidence", None, " ".join([guidance] + notes))
    grounded = [
        (h, c, k)
        for h, c, k in direct
        if scored[k]["similarity"] >= cfg.similarity_floor
        and scored[k]["keyword"] > cfg.grounded_min_keyword
        and keyword_coverage(term_stems, h.get("snippet") or "")[0] > 0
    ]
    if not grounded:
        best = max(direct, key=lambda d: (scored[d[2]]["similarity"], scored[d[2]]["keyword"]))
        sim, kw = scored[best[2]]["similarity"], scored[best[2]]["keyword"]
        guidance = (
            f'Only weak evidence about "{subject}" (best hit: similarity {sim:.2f} against a floor of '
            f"{cfg.similarity_floor:.2f}, {kw:.0%} of the query's terms): check the hits before relying on them. "
            f"If a decision about it was made, {_capture_hint(subject)}."
        )
        return Verdict("weak", None, " ".join([guidance] + notes))
    family = _family(grounded[0][1])
    clusters: list[list[tuple[dict, Candidate, str]]] = []
    for item in sorted((g for g in grounded if _family(g[1]) == family), key=lambda g: (-scored[g[2]]["score"], g[2])):
        for cluster in clusters:
            if _same_area(cluster[0][1], item[1]):
                cluster.append(item)
                break
        else:
            clusters.append([item])
    if len(clusters) >= 2:
        first, second = clusters[0][0], clusters[1][0]
        mass = [sum(scored[item[2]]["score"] for item in cluster) for cluster in clusters[:2]]
        if (
            scored[first[2]]["score"] - scored[second[2]]["score"] <= cfg.ambiguity_margin
            and mass[1] >= cfg.ambiguity_mass * mass[0]
        ):
            a, b = _area_names(first[1], second[1])
            question = (
                f'"{subject}" matches two areas about equally: {a} (best: {_name(first[0])}) and {b} '
                f"(best: {_name(second[0])}). Which one do you mean — or both?"
            )
            return Verdict("ambiguous", question, " ".join(notes) or None)
    return Verdict("grounded", None, " ".join(notes) or None)


def _name(hit: dict[str, Any]) -> str:
    if hit.get("node_id"):
        return f"{hit['title']!r}"
    return f"{hit['ref']}"
