"""Intent classification: deterministic heuristics that weight the channels. Retrieval always runs
every channel whatever the intent; the intent only multiplies channel weights and source priors.

Intents: ``doc_lookup`` (how-to, docs, conventions), ``code_location`` (where is X, identifiers,
file names), ``module_health`` (failing, stale, debt, issues), ``research`` (why, rationale,
history, alternatives) and ``general``. Each cue found adds to its intent's score; the highest
score wins, ties broken in that listed order; no cue at all is ``general``. A question that opens
with "why" asks for a reason whatever names it holds ("why is there a TYPER_USE_RICH variable"): its
"why" counts :data:`LEADING_WHY` more, so one identifier beside it does not make it a lookup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

INTENTS = ("code_location", "doc_lookup", "module_health", "research", "general")

_PHRASES: dict[str, tuple[str, ...]] = {
    "code_location": (
        "where is", "where are", "where do", "where does", "which file", "which function", "which class",
        "which module", "defined", "definition of", "implemented", "implementation of", "call site", "calls",
        "find the", "locate", "source of", "code for", "function", "method", "class",
    ),
    "doc_lookup": (
        "how to", "how do i", "how do we", "documentation", "docs", "readme", "guide", "tutorial", "usage",
        "example", "convention", "conventions", "policy", "what does the doc", "explain", "configure",
        "configuration", "setting", "settings", "option",
    ),
    "module_health": (
        "health", "broken", "failing", "fails", "flaky", "stale", "outdated", "deprecated", "tech debt",
        "debt", "todo", "fixme", "bug", "bugs", "issue", "issues", "regression", "coverage", "refactor",
        "smell", "orphan", "needs review", "problem", "problems",
    ),
    "research": (
        "why", "rationale", "decision", "decided", "decide", "history", "trade-off", "tradeoff", "trade off",
        "alternatives", "alternative", "compare", "comparison", "versus", " vs ", "should we", "pros and cons",
        "background", "reason", "reasons", "superseded",
    ),
}
LEADING_WHY = 1.0  # added to research when the question's first word is "why"
_IDENTIFIER = re.compile(r"\b(?:[a-z]+[A-Z]\w*|[A-Za-z]+_\w+|\w+\(\)|\w+\.\w+\.\w+)\b")
_FILE = re.compile(r"\b[\w./-]+\.(?:py|pyi|js|ts|tsx|jsx|go|rs|java|kt|c|h|cc|cpp|hpp|rb|php|sh|sql|toml|ya?ml|json)\b")
_DOC_FILE = re.compile(r"\b[\w./-]+\.(?:md|rst|txt|adoc)\b", re.IGNORECASE)

# Multipliers applied to the channel weights (missing: 1) and to the source priors.
CHANNEL_BOOSTS: dict[str, dict[str, float]] = {
    "code_location": {"code_bm25": 1.3, "symbols": 2.0, "paths": 1.6, "node_bm25": 0.8, "node_title_tags": 0.8},
    "doc_lookup": {"node_title_tags": 1.3, "node_bm25": 1.2, "code_bm25": 1.1},
    "module_health": {"node_bm25": 1.3, "node_title_tags": 1.2, "paths": 1.3, "graph": 1.3},
    "research": {"node_bm25": 1.4, "node_title_tags": 1.3, "sessions": 1.4, "history": 1.4, "graph": 1.4,
                 "symbols": 0.7},
    "general": {},
}
KIND_BOOSTS: dict[str, dict[str, float]] = {
    "code_location": {"code": 1.1, "doc": 0.9},
    "doc_lookup": {"doc": 1.15, "code": 0.9},
    "module_health": {},
    "research": {"node": 1.05, "code": 0.9},
    "general": {},
}


# The code_location cues that ask where something is (a lookup), as against a change that names things
# ("Fix `retry` option merging"): :func:`asks_where`.
WHERE_PHRASES = frozenset({
    "where is", "where are", "where do", "where does", "which file", "which function", "which class", "which module",
    "defined", "definition of", "implemented", "implementation of", "locate", "find the", "source of", "code for",
})
_WORD = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class Intent:
    name: str
    cues: tuple[str, ...] = ()
    scores: dict[str, float] = field(default_factory=dict)

    def channel_weights(self, base: dict[str, float]) -> dict[str, float]:
        boosts = CHANNEL_BOOSTS[self.name]
        return {c: w * boosts.get(c, 1.0) for c, w in base.items()}

    def kind_boost(self, kind: str) -> float:
        group = "node" if kind == "node" else "doc" if kind == "doc" else "code" if kind == "code" else kind
        return KIND_BOOSTS[self.name].get(group, 1.0)


def classify_intent(query: str) -> Intent:
    text = " " + " ".join(query.lower().split()) + " "
    scores = {name: 0.0 for name in INTENTS if name != "general"}
    cues: list[str] = []
    for name, phrases in _PHRASES.items():
        for phrase in phrases:
            needle = phrase if phrase.startswith(" ") else f" {phrase}"
            # whole words: the phrase followed by a non-letter
            at = text.find(needle)
            while at != -1:
                after = text[at + len(needle) : at + len(needle) + 1]
                if not after.isalnum():
                    scores[name] += 1.0
                    cues.append(f"{name}:{phrase.strip()}")
                    break
                at = text.find(needle, at + 1)
    if text.startswith(" why "):
        scores["research"] += LEADING_WHY
        cues.append("research:leading why")
    for match in _IDENTIFIER.findall(query):
        scores["code_location"] += 1.0
        cues.append(f"code_location:identifier {match}")
    for match in _FILE.findall(query):
        scores["code_location"] += 1.5
        cues.append(f"code_location:file {match}")
    for match in _DOC_FILE.findall(query):
        scores["doc_lookup"] += 1.5
        cues.append(f"doc_lookup:file {match}")
    best = max(scores.values())
    if best <= 0:
        return Intent("general", (), scores)
    name = next(n for n in INTENTS if scores.get(n, 0.0) == best)
    return Intent(name, tuple(cues), scores)


def asks_where(query: str, intent: Intent, identifiers: list[str]) -> bool:
    """Whether the query looks a name up: it is the names alone (``iter_bytes``, `` `TYPER_USE_RICH` ``),
    or it asks where something is ("where is compute_backoff defined"), not a change that names them.
    ``identifiers``: the query's (:func:`autology_mcp.common.text.code_identifiers`); none, no lookup."""
    if not identifiers:
        return False
    if all(word.lower() in identifiers for word in _WORD.findall(query)):
        return True
    return any(cue.split(":", 1)[1] in WHERE_PHRASES for cue in intent.cues if cue.startswith("code_location:"))
