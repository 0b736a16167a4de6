"""The verdict on every answer, decided from the evidence alone by the evidence gate
(:mod:`autology_mcp.retrieval.gate`):

- ``grounded``: the best hit's support (how likely it is about the query's subject: how much of the
  subject it holds, in its text and its title, against the words the memory never mentions) reaches
  ``gate_threshold``;
- ``ambiguous``: the hits that reach it, of the best hit's family (nodes, or files), form clusters in
  different areas (a node's tags, or its type when one of two is untagged; folder trees), the best
  hit of the second cluster scores within ``ambiguity_margin`` of the first, and the second cluster
  weighs at least ``ambiguity_mass`` of the first (sum of its hits' scores): two competing bodies
  of evidence, not one answer and a stray hit. The answer carries a clarifying question naming
  both areas;
- ``weak``: there are hits with query terms in them, but none reaches the gate (or the query has
  only stop words, which match by accident): the answer says plainly that the memory does not know
  the subject;
- ``no_evidence``: nothing of the query was found.

Neither of the last two pushes recording a decision unless the question is about the project: it
says "we" or "our", names an identifier or a file, or the project's code or docs hold the subject
(a code or doc hit reaches ``gate_item_threshold``). A question about nothing the project knows
("What kind of car does Evan drive?") is told so, not asked to become a decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from autology_mcp.common.text import NODE_STOP_WORDS, node_query_terms
from autology_mcp.retrieval.candidates import Candidate
from autology_mcp.retrieval.gate import Subject
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


_PROJECT_WORDS = re.compile(r"\b(?:we|our|ours|this (?:project|repo|repository|codebase|code base))\b", re.IGNORECASE)
_CODE_CUES = ("code_location:identifier", "code_location:file", "doc_lookup:file")


def about_the_project(query: str, intent: Intent, hits: list[dict[str, Any]], cfg: RetrievalConfig) -> bool:
    """Whether a question the memory cannot answer is still about the project, so that recording the
    answer as a decision makes sense: it says "we" or "our", names an identifier or a file, or a code or
    doc hit holds its subject well enough to be shown on its own."""
    if _PROJECT_WORDS.search(query) or any(c.startswith(_CODE_CUES) for c in intent.cues):
        return True
    return any(h["kind"] in ("code", "doc") and h["components"].get("support", 0.0) >= cfg.gate_item_threshold
               for h in hits)


def _unknown(subject: Subject | None) -> str:
    words = list(subject.unknown[:4]) if subject else []
    return (" (it never mentions " + ", ".join(f"'{w}'" for w in words) + ")") if words else ""


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
    subject: Subject | None = None,
) -> Verdict:
    subject_text = _subject(query)
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
        guidance = (f'"{subject_text}" has only very common words, so the hits match it by accident: say what you are '
                    "looking for (a component, a file, a symbol, a decision).")
        return Verdict("weak", None, " ".join([guidance] + notes))
    project = about_the_project(query, intent, hits, cfg)
    what = "decision" if intent.name in ("research", "general", "doc_lookup") else "knowledge"
    if not direct:
        if code_unsearched(code_index, scopes):  # the answer may be in the code: no push to record one yet
            guidance = (f'Nothing in the knowledge or past sessions mentions "{subject_text}"; search again once the code '
                        "index is ready, before recording anything.")
        elif project:
            guidance = (f'No {what} is recorded about "{subject_text}" and nothing in the searched sources mentions it; '
                        f"{_capture_hint(subject_text)}.")
        else:
            guidance = (f'The project memory does not know about "{subject_text}": nothing in the searched sources '
                        f"mentions it. If it is about this project, name what it touches (a component, a file, a symbol).")
        return Verdict("no_evidence", None, " ".join([guidance] + notes))
    grounded = [(h, c, k) for h, c, k in direct if scored[k].get("support", 0.0) >= cfg.gate_threshold]
    if not grounded:
        best = max(direct, key=lambda d: scored[d[2]].get("support", 0.0))
        held = scored[best[2]].get("coverage", 0.0)
        guidance = (f'The project memory does not know about "{subject_text}": its best hit holds {held:.0%} of what '
                    f"the question is about{_unknown(subject)}, so the hits only share some of its words.")
        if project:
            guidance += f" Check them before relying on them; if a {what} about it was made, {_capture_hint(subject_text)}."
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
                f'"{subject_text}" matches two areas about equally: {a} (best: {_name(first[0])}) and {b} '
                f"(best: {_name(second[0])}). Which one do you mean — or both?"
            )
            return Verdict("ambiguous", question, " ".join(notes) or None)
    return Verdict("grounded", None, " ".join(notes) or None)


def _name(hit: dict[str, Any]) -> str:
    if hit.get("node_id"):
        return f"{hit['title']!r}"
    return f"{hit['ref']}"
