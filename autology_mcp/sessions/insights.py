"""Insight mining: decisions, principles, discoveries and conventions buried in session turns.

A sentence is a candidate when it holds a trigger phrase ("we decided", "let's go with", "always",
"never", "the fix was", "the root cause", "from now on", ...). Its quality score, from 0 to 1:

    0.25 * length + 0.15 * punctuation + 0.05 * capital + 0.55 * conclusiveness - hedge - noise

- ``length``: 1 for 8-40 words, 0.6 for 5-7 or 41-70 words, 0.2 otherwise (fewer than 4: not a candidate);
- ``punctuation``: 1 when it ends like a statement (``.`` or ``!``), 0.5 with no end mark, 0 after ``:``;
- ``capital``: it starts with a capital letter or a digit;
- ``conclusiveness``: the trigger's strength (1 for "we decided"/"the fix was", 0.6 for "always"/"never"),
  halved minus 0.2 when the sentence hedges ("maybe", "might", "I think", ...), which also costs 0.15;
- ``noise``: 0.4 when more than 8% of its characters are code punctuation (code, UI and log noise).

A question is never an insight. Candidates at or above the threshold (0.4 by default) are kept;
near-identical ones are merged, and each is checked against the existing nodes (``duplicate_of``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from autology_mcp.common.text import NODE_STOP_WORDS
from autology_mcp.sessions.transcript import Turn

THRESHOLD = 0.4
SENTENCE_MAX = 400
NODE_TYPE = {"decision": "decision", "principle": "convention", "convention": "convention", "discovery": "issue"}

_TRIGGERS: list[tuple[str, float, re.Pattern[str]]] = [
    (kind, strength, re.compile(pattern, re.IGNORECASE))
    for kind, strength, pattern in [
        ("decision", 1.0, r"\bwe(?:'ve| have)? decided\b|\bdecided to\b|\bthe decision (?:is|was)\b"),
        ("decision", 1.0, r"\b(?:we|i)(?:'ll| will) go with\b|\blet'?s go with\b|\bwe(?:'re| are) going with\b"),
        ("decision", 1.0, r"\bwe (?:chose|picked|agreed)\b|\bsettled on\b|\bopted (?:for|to)\b|\bwe'll use\b"),
        ("discovery", 1.0, r"\bthe (?:fix|solution|workaround) (?:was|is)\b|\broot cause\b|\bwas caused by\b"),
        ("discovery", 1.0, r"\bturn(?:s|ed) out\b|\bthe (?:problem|issue|bug) (?:was|is) that\b|\bthe culprit\b"),
        ("discovery", 0.8, r"\bwe (?:found|learned|discovered) that\b|\blesson learned\b|\bfixed (?:it |this )?by\b"),
        ("convention", 1.0, r"\bby convention\b|\bthe convention is\b|\bas a rule\b|\bthe rule is\b|\bfrom now on\b"),
        ("convention", 0.8, r"\bgoing forward\b|\bour convention\b|\bwe always\b|\bwe never\b"),
        ("principle", 0.6, r"\balways\b|\bnever\b|\bmust not\b|\bdo not ever\b"),
    ]
]
# A word of every trigger phrase above: a turn holding none of them cannot hold an insight.
_TRIGGER_WORDS = (
    "decid", "decision", "go with", "going with", "chose", "picked", "agreed", "settled", "opted", "'ll use",
    "fix", "solution", "workaround", "root cause", "caused by", "turn", "problem", "issue", "bug", "culprit",
    "found that", "learned that", "discovered that", "lesson", "convention", "rule", "from now on",
    "going forward", "always", "never", "must not", "do not ever",
)
_HEDGES = re.compile(
    r"\b(?:maybe|perhaps|might|probably|possibly|not sure|i think|i guess|could we|should we|what if|wonder|unless|"
    r"if we|would it|do we)\b",
    re.IGNORECASE,
)
_NOT_INSIGHT = re.compile(r"\bnever mind\b|\balways allow\b|\bdon't ask again\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'`(*])")
_LABEL = re.compile(r"^(?:[A-Z][\w-]*)(?: [\w-]+){0,2}: (?=\S)")  # "Key decisions: we decided…" -> "we decided…"
_BULLET = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_CODE_CHARS = set("{}[]()<>=|`$\\_#;")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


@dataclass(frozen=True)
class Insight:
    kind: str  # decision | principle | discovery | convention
    text: str
    score: float
    session_id: str = ""
    turn: int = -1
    timestamp: str = ""
    duplicate_of: str | None = None  # the id of an existing node saying the same

    @property
    def node_type(self) -> str:
        return NODE_TYPE[self.kind]

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "type": self.node_type,
            "text": self.text,
            "score": self.score,
            "session_id": self.session_id,
            "turn": self.turn,
            "timestamp": self.timestamp,
            "duplicate_of": self.duplicate_of,
        }


def sentences(text: str) -> list[str]:
    """Prose sentences of a turn: tool lines, code blocks and table rows left out, bullets unwrapped."""
    out: list[str] = []
    in_code = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line or line.startswith(("[tool ", "[result ", "|")):
            continue
        line = _BULLET.sub("", line).replace("**", "").replace("__", "").strip()
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            unlabelled = _LABEL.sub("", part)
            if unlabelled != part and unlabelled:  # the sentence after a label starts with a capital
                part = unlabelled[0].upper() + unlabelled[1:]
            if part:
                out.append(part)
    return out


def _trigger(sentence: str) -> tuple[str, float] | None:
    for kind, strength, pattern in _TRIGGERS:
        if pattern.search(sentence):
            return kind, strength
    return None


def quality(sentence: str, strength: float) -> float:
    """The quality score of a candidate sentence (see the module docstring)."""
    words = len(_WORD.findall(sentence))
    if words < 4 or sentence.rstrip().endswith("?"):
        return 0.0
    length = 1.0 if 8 <= words <= 40 else 0.6 if 5 <= words <= 70 else 0.2
    end = sentence.rstrip()[-1:]
    punctuation = 1.0 if end in ".!" else 0.0 if end in ":," else 0.5
    capital = 1.0 if sentence[:1].isupper() or sentence[:1].isdigit() else 0.0
    conclusive, hedge = strength, 0.0
    if _HEDGES.search(sentence):
        conclusive, hedge = max(0.0, strength / 2 - 0.2), 0.15
    noise = 0.4 if sum(ch in _CODE_CHARS for ch in sentence) > 0.08 * len(sentence) else 0.0
    score = 0.25 * length + 0.15 * punctuation + 0.05 * capital + 0.55 * conclusive - hedge - noise
    return round(min(1.0, max(0.0, score)), 3)


def mine_turns(turns: Iterable[Turn], session_id: str = "", threshold: float = 0.0) -> list[Insight]:
    """Every candidate insight of these turns scoring at least ``threshold``, in turn order."""
    found: list[Insight] = []
    for turn in turns:
        lower = turn.text.lower()
        if not any(word in lower for word in _TRIGGER_WORDS):
            continue  # most turns hold no trigger phrase: no need to split them into sentences
        for sentence in sentences(turn.text):
            if len(sentence) > SENTENCE_MAX or _NOT_INSIGHT.search(sentence):
                continue
            hit = _trigger(sentence)
            if hit is None:
                continue
            score = quality(sentence, hit[1])
            if score >= threshold and score > 0:
                found.append(Insight(hit[0], sentence, score, session_id, turn.n, turn.timestamp))
    return found


def _key(text: str) -> frozenset[str]:
    """The content words of a text, lowercased (all of them: query_terms caps a query's terms)."""
    return frozenset(w.lower() for w in _WORD.findall(text)) - NODE_STOP_WORDS


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a) if a else 0.0


def merge_duplicates(insights: Iterable[Insight]) -> list[Insight]:
    """One insight per statement: of near-identical ones (90% of the words shared), the best scored."""
    kept: list[tuple[frozenset[str], Insight]] = []
    for insight in sorted(insights, key=lambda i: (-i.score, i.timestamp, i.session_id, i.turn)):
        key = _key(insight.text)
        if any(_overlap(key, other) >= 0.9 and _overlap(other, key) >= 0.9 for other, _ in kept):
            continue
        kept.append((key, insight))
    return [insight for _, insight in kept]


def mark_known(insights: list[Insight], index: object, overlap: float = 0.7) -> list[Insight]:
    """Each insight with ``duplicate_of`` set when an existing node already holds most of its words.

    ``index`` is the node store's :class:`~autology_mcp.knowledge.node_index.NodeIndex`.
    """
    from autology_mcp.knowledge.search import search_nodes

    out = []
    for insight in insights:
        key = _key(insight.text)
        duplicate = None
        for hit in search_nodes(index, insight.text, limit=3):  # type: ignore[arg-type]
            node_terms = _key(f"{hit.node.title} {hit.node.content}")
            if _overlap(key, node_terms) >= overlap:
                duplicate = hit.node.id
                break
        out.append(replace(insight, duplicate_of=duplicate))
    return out
