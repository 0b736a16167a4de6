"""Evidence cards: each hit as the answer shows it, landed on the lines that prove it.

The proof lines are the ``detail``-sized window of the hit's text holding the most query terms,
matched as unified retrieval's keywords (:func:`autology_mcp.common.text.keyword_pattern`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autology_mcp.common.text import keyword_pattern, keyword_text
from autology_mcp.knowledge.markdown import render_node
from autology_mcp.retrieval.candidates import Candidate

SNIPPET_LINES = {"brief": 1, "normal": 3, "full": 8}
SNIPPET_WIDTH = 200


def card(cand: Candidate, s: dict[str, float], term_stems: list[str], detail: str, store, root: Path) -> dict:
    """The hit's evidence card: what it is, where (``path:lines`` or node id), its proof lines and score components."""
    n_lines = SNIPPET_LINES[detail]
    hit: dict[str, Any] = {
        "kind": cand.kind,
        "ref": cand.ref,
        "node_id": cand.node.id if cand.node is not None else None,
        "node_type": cand.node.type.value if cand.node is not None else None,
        "title": cand.title,
        "path": cand.path,
        "start_line": None,
        "end_line": None,
        "snippet": "",
        "score": s["score"],
        "components": {k: round(s[k], 6 if k == "rrf" else 4) for k in (
            "priority", "similarity", "keyword", "rrf", "coverage", "title_coverage", "support", "via_support", "node_score",
            "history_prior")
            if k in s},
        "channels": sorted(set(cand.meta.get("channels", []) + cand.meta.get("channels_inherited", []))),
        "via": cand.via,
    }
    if cand.node is not None:
        node = cand.node
        hit["status"] = node.status.value
        rel = store.index.node_path(node.id) if store is not None else None
        lines: list[str] | None = None
        if rel:
            hit["path"] = rel
            try:
                lines = (root / rel).read_text(encoding="utf-8").split("\n")
            except OSError:
                lines = None
        if lines is None:
            lines = render_node(node).split("\n")
        # The proof lines come from the text under the title (the title is the hit's own field).
        body_at = _body_start(lines)
        while body_at < len(lines) - 1 and (not lines[body_at].strip() or lines[body_at].startswith("# ")):
            body_at += 1
        at, matched = proof_window(lines[body_at:], term_stems, n_lines)
        start = body_at + at
        while not matched and start < len(lines) - 1 and (not lines[start].strip() or lines[start].startswith("#")):
            start += 1  # nothing of the query in the text (a graph neighbour, a title match): its first lines
        window = [line for line in lines[start : start + n_lines]]
        while len(window) > 1 and (not window[-1].strip() or window[-1].startswith("#")):
            window.pop()
        hit["start_line"], hit["end_line"] = start + 1, start + max(1, len(window))
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in window)
        if detail == "full":
            hit["tags"] = list(node.tags)
            hit["references"] = list(node.references)
    elif cand.kind in ("code", "doc"):
        lines = cand.text.split("\n") if cand.text else []
        at, _ = proof_window(lines, term_stems, n_lines)
        window = lines[at : at + n_lines]
        start = (cand.start_line or 1) + at
        hit["start_line"], hit["end_line"] = start, start + max(1, len(window)) - 1
        hit["ref"] = f"{cand.path}:{hit['start_line']}-{hit['end_line']}"
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in window)
        if cand.meta.get("symbol"):
            hit["symbol"] = cand.meta["symbol"]
        if detail == "full":
            hit["section"] = {"start_line": cand.start_line, "end_line": cand.end_line,
                              "chunk_type": cand.meta.get("chunk_type")}
    elif cand.kind == "commit":
        # the proof lines come from the message's body; the subject is the hit's title, the files its own field
        lines = [line for line in (cand.text or "").split("\n")[1:] if not line.startswith("Files: ")]
        at, _ = proof_window(lines, term_stems, n_lines)
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in lines[at : at + n_lines])
        hit["commit"] = {"sha": cand.meta.get("sha"), "date": cand.meta.get("date"), "author": cand.meta.get("author"),
                         "files": list(cand.meta.get("files") or [])[: 20 if detail == "full" else 5]}
        if cand.meta.get("changed"):
            hit["commit"]["changed"] = list(cand.meta["changed"])
        if cand.meta.get("bot"):
            hit["commit"]["bot"] = True
    else:  # a session: its proof lines from what the gate weighed (without the user's echoes of the query)
        text = cand.meta.get("evidence_text", cand.text)
        lines = text.split("\n") if text else []
        at, _ = proof_window(lines, term_stems, n_lines)
        hit["snippet"] = "\n".join(line[:SNIPPET_WIDTH] for line in lines[at : at + n_lines])
        hit["session_id"] = cand.meta.get("session_id")
        if cand.meta.get("turn_start") is not None:
            hit["turns"] = [cand.meta.get("turn_start"), cand.meta.get("turn_end")]
        if cand.meta.get("timestamp"):
            hit["timestamp"] = cand.meta["timestamp"]
    return hit


def _body_start(lines: list[str]) -> int:
    """The first line after the YAML frontmatter (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return i + 1
    return 0


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
