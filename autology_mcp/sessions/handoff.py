"""A session's handoff: a short extractive summary of what was asked, done, touched and decided.

It is indexed as the ``handoff`` document of the session, feeds the proactive recall at session
start, and is the body of the ``session`` node written at SessionEnd. Built only from the (already
redacted) turns and parse state, so it holds nothing the session file does not.
"""

from __future__ import annotations

from autology_mcp.sessions.insights import Insight, merge_duplicates, mine_turns
from autology_mcp.sessions.transcript import ParseState, Turn, one_line

HANDOFF_MAX = 1300
PROMPTS_SHOWN = 4
FILES_SHOWN = 12
DECISIONS_SHOWN = 5


def _prose(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(("[tool ", "[result ")))


def decisions(turns: list[Turn], session_id: str = "", threshold: float = 0.4) -> list[Insight]:
    """The decisions mentioned in the session, best first."""
    mined = [i for i in mine_turns(turns, session_id, threshold) if i.kind == "decision"]
    return merge_duplicates(mined)


def sections(state: ParseState, turns: list[Turn], session_id: str = "") -> dict[str, list[str]]:
    """The handoff's parts: asked, done, files, decisions (each a list of lines)."""
    prompts: list[str] = []
    for turn in turns:  # the first few prompts (slash commands aside)
        if len(prompts) == PROMPTS_SHOWN:
            break
        text = _prose(turn.text).strip() if turn.role == "user" else ""
        if text and not text.startswith("/"):
            prompts.append(one_line(text, 160))
    last_answer = next(
        (text for t in reversed(turns) if t.role == "assistant" and (text := _prose(t.text).strip())), ""
    )
    done: list[str] = []
    if last_answer:
        done.append(one_line(last_answer, 420))
    else:
        compacted = next((t.text for t in reversed(turns) if t.role == "compact_summary"), "")
        if compacted:
            done.append(one_line(compacted, 420))
    tools = sorted(state.tool_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
    if tools:
        done.append("Tools: " + ", ".join(f"{name} ×{count}" for name, count in tools))
    files = list(state.files_modified)
    shown = files[:FILES_SHOWN]
    file_lines = shown + ([f"… and {len(files) - len(shown)} more"] if len(files) > len(shown) else [])
    decided = [one_line(i.text, 200) for i in decisions(turns, session_id)[:DECISIONS_SHOWN]]
    return {"asked": prompts, "done": done, "files": file_lines, "decisions": decided}


def build_handoff(state: ParseState, turns: list[Turn], session_id: str = "") -> str:
    parts = sections(state, turns, session_id)
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
