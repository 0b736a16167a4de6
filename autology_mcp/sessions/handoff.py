"""A session's handoff: a short extractive summary of what was asked, done, touched and decided.

It is indexed as the ``handoff`` document of the session, feeds the proactive recall at session
start, and is the body of the ``session`` node written at SessionEnd. Built only from the (already
redacted) turns and parse state, so it holds nothing the session file does not. What it reads of
the turns is kept as running state (:class:`~autology_mcp.sessions.summary.SessionSummary`), so
building it at the end of a long session does not read the session again.
"""

from __future__ import annotations

from autology_mcp.sessions.insights import Insight, merge_duplicates, mine_turns
from autology_mcp.sessions.summary import SessionSummary
from autology_mcp.sessions.transcript import ParseState, Turn, one_line

HANDOFF_MAX = 1300
FILES_SHOWN = 12
DECISIONS_SHOWN = 5


def decisions(turns: list[Turn], session_id: str = "", threshold: float = 0.4) -> list[Insight]:
    """The decisions mentioned in the session, best first."""
    mined = [i for i in mine_turns(turns, session_id, threshold) if i.kind == "decision"]
    return merge_duplicates(mined)


def summary_sections(state: ParseState, summary: SessionSummary) -> dict[str, list[str]]:
    """The handoff's parts: asked, done, files, decisions (each a list of lines)."""
    done: list[str] = []
    if summary.last_answer:
        done.append(summary.last_answer)
    elif summary.last_compact:
        done.append(summary.last_compact)
    tools = sorted(state.tool_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
    if tools:
        done.append("Tools: " + ", ".join(f"{name} ×{count}" for name, count in tools))
    files = list(state.files_modified)
    shown = files[:FILES_SHOWN]
    file_lines = shown + ([f"… and {len(files) - len(shown)} more"] if len(files) > len(shown) else [])
    decided = [one_line(i.text, 200) for i in merge_duplicates(summary.decisions)[:DECISIONS_SHOWN]]
    return {"asked": list(summary.prompts), "done": done, "files": file_lines, "decisions": decided}


def sections(state: ParseState, turns: list[Turn], session_id: str = "") -> dict[str, list[str]]:
    """The handoff's parts computed from all the turns (the same as from their running summary)."""
    return summary_sections(state, SessionSummary.of(turns, session_id))


def handoff_of(state: ParseState, summary: SessionSummary) -> str:
    parts = summary_sections(state, summary)
    lines: list[str] = []
    if parts["asked"]:
        lines.append("Asked: " + " | ".join(parts["asked"]))
    if parts["done"]:
        lines.append("Done: " + " ".join(parts["done"]))
    if parts["files"]:
        lines.append("Files touched: " + ", ".join(parts["files"]))
    if parts["decisions"]:
        lines.append("Decisions: " + " | ".join(parts["decisions"]))
    text = "\n".join(lines)
    return text if len(text) <= HANDOFF_MAX else text[: HANDOFF_MAX - 1].rstrip() + "…"


def build_handoff(state: ParseState, turns: list[Turn], session_id: str = "") -> str:
    return handoff_of(state, SessionSummary.of(turns, session_id))
