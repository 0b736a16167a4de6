"""Proactive recall at SessionStart: the latest session's key topics, and the knowledge they retrieve.

The topics are the top 5 keywords of the latest handoff (the seed's rule, adapted to English):
file names, code identifiers (snake_case, CamelCase, camelCase, CONSTANT_CASE, dotted.names) and
Title Case terms (acronyms and runs of capitalised words), ranked by kind and frequency; when the
handoff names fewer than 5 such things, its long words that occur at least twice fill the list. The nodes
they retrieve come from the node store's own search with those keywords.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autology_mcp.common.clip import clip_lines
from autology_mcp.common.text import NODE_STOP_WORDS

if TYPE_CHECKING:
    from autology_mcp.knowledge.search import Hit
    from autology_mcp.knowledge.store import NodeStore

KEYWORDS_MAX = 5
NODES_MAX = 5
BLOCK_MAX = 700

_FILE = re.compile(
    r"(?<![\w@])(?:[\w.-]+/)*([\w-]+\.(?:py|pyi|md|rst|txt|ts|tsx|js|jsx|mjs|json|toml|yaml|yml|go|rs|java|kt|rb|php|"
    r"c|h|cc|cpp|hpp|cs|swift|sh|sql|css|scss|html|vue|svelte|cfg|ini|lock|proto|graphql))\b"
)
_IDENTIFIERS = [
    re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),  # snake_case
    re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"),  # CONSTANT_CASE
    re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b"),  # CamelCase
    re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]+)+\b"),  # camelCase
    re.compile(r"\b[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){1,3}\(?"),  # dotted.names (calls, modules)
]
_ACRONYM = re.compile(r"\b[A-Z]{2,}[0-9]*\b")
_TITLE_RUN = re.compile(r"\b[A-Z][a-z][a-z0-9]*(?:[ -][A-Z][a-z][a-z0-9]*)*\b")
_PLAIN_WORD = re.compile(r"\b[a-z]{6,}\b")
_REDACTED = re.compile(r"\[REDACTED:[a-z_]+\]")
_TOOLS_LINE = re.compile(r"Tools: [^\n]*")  # tool names (Edit, Bash) are not topics
_IGNORED = NODE_STOP_WORDS | frozenset(
    """asked done files touched decisions tools user claude summary session let now also then here there
    ok okay yes no please thanks add fix run use make check see new next all any each every one two first last
    i'll we'll it's that's let's after before because since while once still just only some without
    should would could really about which their there these those other""".split()
)
WEIGHT = {"file": 3.0, "identifier": 2.5, "title": 1.5, "acronym": 1.2}


def keywords(text: str, limit: int = KEYWORDS_MAX) -> list[str]:
    """The top keywords of a handoff: files, identifiers, then Title Case terms, by weight x frequency."""
    text = _TOOLS_LINE.sub(" ", _REDACTED.sub(" ", text))
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}
    first: dict[str, int] = {}
    taken: list[tuple[int, int]] = []

    def add(word: str, kind: str, span: tuple[int, int]) -> None:
        word = word.strip(" .-(")
        key = word.lower()
        if len(key) < 3 or key in _IGNORED:
            return
        taken.append(span)
        scores[key] = scores.get(key, 0.0) + WEIGHT[kind]
        shown.setdefault(key, word)
        first.setdefault(key, span[0])

    def free(span: tuple[int, int]) -> bool:
        return not any(a < span[1] and span[0] < b for a, b in taken)

    for m in _FILE.finditer(text):
        add(m.group(1), "file", m.span())
    for pattern in _IDENTIFIERS:
        for m in pattern.finditer(text):
            if free(m.span()):
                add(m.group(0), "identifier", m.span())
    for m in _TITLE_RUN.finditer(text):
        if not free(m.span()):
            continue
        words = [w for w in re.split(r"[ -]", m.group(0)) if w.lower() not in _IGNORED]
        if not words:
            continue
        at_start = m.start() == 0 or text[: m.start()].rstrip()[-1:] in ".!?:|\n"
        if len(words) == 1 and at_start:
            continue  # a capital that only starts a sentence says nothing
        add(" ".join(words), "title", m.span())
    for m in _ACRONYM.finditer(text):
        if free(m.span()):
            add(m.group(0), "acronym", m.span())
    ranked = sorted(scores, key=lambda k: (-scores[k], first[k]))[:limit]
    if len(ranked) < limit:  # too few named things: fill up with the handoff's most frequent long words
        counts: dict[str, int] = {}
        for m in _PLAIN_WORD.finditer(text):
            key = m.group(0).lower()
            if key not in _IGNORED and key not in scores and not any(key in r for r in ranked):
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, m.start())
                shown.setdefault(key, key)
        repeated = [k for k in counts if counts[k] >= 2]
        ranked += sorted(repeated, key=lambda k: (-counts[k], first[k]))[: limit - len(ranked)]
    return [shown[k] for k in ranked]


@dataclass(frozen=True)
class Recall:
    session_id: str
    title: str
    when: str
    keywords: list[str]
    nodes: list[Hit]

    def text(self, limit: int = BLOCK_MAX) -> str:
        day = self.when[:10] or "unknown date"
        from autology_mcp.knowledge.trust.untrusted import FRAME, quoted

        # the session's title and topics are its words, as the nodes' are theirs: quoted, under the frame
        header = [f"autology — last session ({day}; {FRAME}): {quoted(self.title)}",
                  f"Key topics: {quoted(', '.join(self.keywords))}"]
        items = [f"- [{h.node.type.value}] {h.node.id}: {quoted(h.node.title)}" for h in self.nodes]
        if items:
            header.append("Knowledge about these topics:")
        footer = ['Past sessions are searchable: `autology sessions search WORDS …`.']  # no <…>: Gemini shows it HTML-escaped
        return clip_lines(header, items, footer, limit)


def latest_recall(root: Path, store: NodeStore | None, exclude_session: str | None = None) -> Recall | None:
    """The recall of the latest ingested session (other than ``exclude_session``), or None."""
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.paths import sessions_dir

    if not sessions_dir(root).is_dir():
        return None
    with SessionIndex.for_root(root).reading() as conn:
        row = conn.execute(
            "SELECT session_id, title, handoff, last_timestamp FROM sources WHERE handoff != '' AND session_id != ?"
            " ORDER BY last_timestamp DESC, session_id DESC LIMIT 1",
            (exclude_session or "",),
        ).fetchone()
    if row is None:
        return None
    session_id, title, handoff, when = row
    words = keywords(f"{title}\n{handoff}")
    if not words:
        return None
    hits: list[Hit] = []
    if store is not None:
        from autology_mcp.knowledge.search import search_nodes

        query = " ".join(re.sub(r"\.[a-z]+$", "", w) if _FILE.fullmatch(w) else w for w in words)  # client.py -> client
        from autology_mcp.knowledge.trust.untrusted import held_back

        hits = [h for h in search_nodes(store.index, query, limit=NODES_MAX) if h.node.status.value != "superseded"
                and not held_back(store.paths.base, h.node.id, h.node.title, h.node.content)]
    return Recall(session_id, title, when, words, hits)
