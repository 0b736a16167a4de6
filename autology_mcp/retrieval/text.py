"""Proof lines: the window of a hit's text that holds the most query terms (matched as unified
retrieval's keywords, :func:`autology_mcp.common.text.keyword_pattern`)."""

from __future__ import annotations

from autology_mcp.common.text import keyword_pattern, keyword_text


def proof_window(lines: list[str], term_stems: list[str], size: int) -> tuple[int, int]:
    """(first line index, number of matched terms) of the ``size``-line window holding the most
    distinct query terms; the earliest such window wins. Index 0 when nothing matches."""
    if not lines:
        return 0, 0
    hay = keyword_text("\n".join(lines)).split("\n")  # one pass; line breaks are kept
    per_line = [{t for t in term_stems if t[:3] in h and keyword_pattern(t).search(h)} for h in hay]
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
