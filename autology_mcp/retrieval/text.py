"""Query terms, keyword coverage and proof spans: the text matching shared by every source.

A query term is reduced to a light stem (``parsing``, ``parser`` and ``parse`` all stem to
``pars``), and it matches a word of the text that starts with that stem and goes on for at most
five more letters, so coverage does not depend on which tokenizer indexed the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from autology_mcp.knowledge.search import query_terms

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "ly", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def terms(query: str) -> list[str]:
    """The query's search terms: lowercase words, stop words dropped, camelCase and snake_case split."""
    return query_terms(_CAMEL.sub(r"\1 \2", query).replace("_", " "))


@lru_cache(maxsize=4096)
def _term_pattern(term_stem: str) -> re.Pattern[str]:
    # a word starting with the stem, followed by at most a suffix's worth of letters
    return re.compile(r"(?<![^\W_])" + re.escape(term_stem) + r"[^\W\d_]{0,5}(?![^\W_])")


def searchable(text: str) -> str:
    """The text as terms are matched against it: camelCase split, snake_case split, lowercase."""
    return _CAMEL.sub(r"\1 \2", text).replace("_", " ").lower()


def coverage(term_stems: list[str], text: str) -> tuple[float, list[str]]:
    """Share of the query's terms found in ``text``, and which (by stem): a term is found when a
    word of the text starts with its stem and goes on for at most five more letters."""
    if not term_stems:
        return 0.0, []
    hay = searchable(text)
    matched = [t for t in term_stems if _term_pattern(t).search(hay)]
    return len(matched) / len(term_stems), matched


def proof_window(lines: list[str], term_stems: list[str], size: int) -> tuple[int, int]:
    """(first line index, number of matched terms) of the ``size``-line window holding the most
    distinct query terms; the earliest such window wins. Index 0 when nothing matches."""
    if not lines:
        return 0, 0
    hay = searchable("\n".join(lines)).split("\n")  # one pass; line breaks are kept
    per_line = [{t for t in term_stems if t[:3] in h and _term_pattern(t).search(h)} for h in hay]
    size = max(1, min(size, len(lines)))
    best_at, best_n = 0, -1
    for i in range(0, len(lines) - size + 1):
        found: set[str] = set()
        for s in per_line[i : i + size]:
            found |= s
        if len(found) > best_n:
            best_at, best_n = i, len(found)
    # Start the window on a matching line when the window's first lines match nothing.
    while best_at < len(lines) - 1 and not per_line[best_at] and any(per_line[best_at : best_at + size]):
        if best_at + size >= len(lines):
            break
        best_at += 1
    return best_at, max(best_n, 0)
