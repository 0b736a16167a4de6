"""Deterministic heuristic classification of a node's type from its title and content.

Each type has keyword patterns; a match in the title counts twice, one in the content once. A few
phrases say outright what a text is ("we decided", "decided to", "we chose", "we opted for") and
count three times as much: "We decided that all clients default to Timeout(5.0)" is a decision
even when its title names a client (issue 16), and a decision without its ADR sections is refused
with the template rather than stored as something else.
The best-scoring type wins when its signal is clear (score >= 2 and strictly ahead of the
runner-up): that is an automatic inference, confidence 0.7. Otherwise the signal is unclear
(``clear`` is false) and :func:`fallback_type` says what to store: the best type, or ``concept``
when nothing matched or when the best is a tie with ``decision`` in it (a decision needs its ADR
sections, and a text without a clear decision signal is not refused for lacking them). The caller
stores such a node for review (issue 16: a capture without a type always succeeds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autology_mcp.knowledge.adr import adr_sections_present
from autology_mcp.knowledge.models import CONFIDENCE_AUTOMATIC, NodeType

_PATTERNS: dict[NodeType, list[str]] = {
    NodeType.DECISION: [
        r"we decided", r"decided to", r"decision", r"\bchose\b", r"\bchoose\b", r"chosen", r"\bopted\b",
        r"\badopt(?:ed|ing)?\b", r"instead of", r"trade-?offs?", r"\bover\b .* because", r"switch(?:ed)? to",
        r"migrat(?:e|ed|ing) to", r"\bselected\b", r"\bgo with\b", r"\buse [\w-]+ for\b",
    ],
    NodeType.COMPONENT: [
        r"\bservice\b", r"\bmodule\b", r"\bclass\b", r"\bcomponent\b", r"\blibrary\b", r"\bpackage\b",
        r"\bendpoints?\b", r"\bhandler\b", r"\bserver\b", r"\bclient\b", r"responsible for", r"\bexposes\b",
        r"\blives in\b", r"\bworker\b", r"\bcli\b", r"\bdaemon\b", r"\bapi\b",
    ],
    NodeType.CONVENTION: [
        r"\balways\b", r"\bnever\b", r"\bmust\b", r"\bconvention\b", r"\bnaming\b", r"\bstyle\b",
        r"\brules?\b", r"\bguidelines?\b", r"\bprefer\b", r"\bdo not\b", r"\bdon't\b", r"\blint", r"\bformat(?:ting)?\b",
        r"\bstandards?\b",
    ],
    NodeType.CONCEPT: [
        r"\bconcept\b", r"\bdomain\b", r"\bmeans\b", r"\bdefinition\b", r"is defined as", r"\bworkflow\b",
        r"\bbusiness\b", r"\blifecycle\b", r"\bglossary\b", r"refers to", r"\brepresents\b", r"\bwhat is\b",
        r"\bterm\b",
    ],
    NodeType.PATTERN: [
        r"\bpattern\b", r"\breusable\b", r"\bapproach\b", r"\btechnique\b", r"\brecipe\b", r"\bstrategy\b",
        r"\bidiom\b", r"\btemplate\b", r"\bhow to\b", r"\bretry\b", r"\bbackoff\b", r"\bmiddleware\b",
        r"\bdecorator\b", r"\bwhenever you need\b",
    ],
    NodeType.ISSUE: [
        r"\bbug\b", r"\bissue\b", r"\bproblem\b", r"\bbroken\b", r"\bfails?\b", r"\bfailure\b", r"\berrors?\b",
        r"tech(?:nical)? debt", r"\blimitation\b", r"\bworkaround\b", r"\bslow\b", r"\bleaks?\b", r"\btodo\b",
        r"\bfixme\b", r"\bflaky\b", r"\bregression\b", r"\bcrash(?:es|ed)?\b", r"\bknown problem",
    ],
    NodeType.SESSION: [
        r"\bsession\b", r"\btoday\b", r"\bworked on\b", r"\baccomplished\b", r"\bsummary\b", r"\bprogress\b",
        r"\bcompleted\b", r"\bnext steps\b", r"\bin this session\b", r"\bwe did\b",
    ],
}

# Phrases that state the type outright: each match counts STRONG times what an ordinary pattern does.
_STRONG_PATTERNS: dict[NodeType, list[str]] = {
    NodeType.DECISION: [r"\bwe(?:'ve| have)? decided\b", r"\bdecided (?:to|that|on|against)\b",
                        r"\bwe(?:'ve| have)? (?:chose|chosen)\b", r"\bwe opted\b", r"\bthe decision (?:is|was)\b"],
}
STRONG = 3

_COMPILED = {t: [re.compile(p, re.IGNORECASE) for p in patterns] for t, patterns in _PATTERNS.items()}
_COMPILED_STRONG = {t: [re.compile(p, re.IGNORECASE) for p in patterns] for t, patterns in _STRONG_PATTERNS.items()}
UNCLEAR_CONFIDENCE = 0.4


@dataclass(frozen=True)
class Classification:
    type: NodeType
    confidence: float
    scores: dict[str, float]

    @property
    def clear(self) -> bool:
        return self.confidence >= CONFIDENCE_AUTOMATIC


def fallback_type(guess: Classification) -> NodeType:
    """The type to store when the classification is unclear: the best-scoring type when it is ahead
    of the rest and is not ``decision``, else ``concept``."""
    ranked = sorted(guess.scores.items(), key=lambda item: -item[1])
    (best, best_score), (_, second_score) = ranked[0], ranked[1]
    if best_score > 0 and best_score > second_score and best != NodeType.DECISION.value:
        return NodeType(best)
    return NodeType.CONCEPT


def classify(title: str, content: str) -> Classification:
    scores: dict[str, float] = {}
    for node_type, patterns in _COMPILED.items():
        score = 0.0
        for pattern in patterns:
            if pattern.search(title):
                score += 2
            if pattern.search(content):
                score += 1
        for pattern in _COMPILED_STRONG.get(node_type, []):
            if pattern.search(title):
                score += 2 * STRONG
            if pattern.search(content):
                score += STRONG
        scores[node_type.value] = score
    if len(adr_sections_present(content)) >= 3:
        scores[NodeType.DECISION.value] += 6
    ranked = sorted(scores.items(), key=lambda item: -item[1])  # stable: spec order breaks ties
    (best, best_score), (_, second_score) = ranked[0], ranked[1]
    clear = best_score >= 2 and best_score > second_score
    return Classification(
        type=NodeType(best),
        confidence=CONFIDENCE_AUTOMATIC if clear else UNCLEAR_CONFIDENCE,
        scores=scores,
    )
