"""What every transcript dialect emits and keeps: turns (:class:`Turn`), the parse state carried from one
ingest to the next (:class:`ParseState`), and the redacted one-line summaries of tool calls.

The parsers themselves are :mod:`~autology_mcp.sessions.transcript` (Claude Code's, and the dispatch) and
``transcript_codex``, ``transcript_gemini``, ``transcript_copilot``; they all import this module, and it
imports none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from autology_mcp.common.redact import redact

ROLES = ("user", "assistant", "compact_summary")
TARGET_MAX = 160
RESULT_LINE_MAX = 160
TITLE_MAX = 120
CLAUDE, CODEX, GEMINI, COPILOT = "claude-code", "codex", "gemini", "copilot"
AGENTS = (CLAUDE, CODEX, GEMINI, COPILOT)
SEEN_MAX = 64  # record keys a dialect remembers to emit a rewritten record once (Gemini)
# Text an agent or a hook put into the conversation: autology's own context must never be read back.
_INJECTED = re.compile(r"<(?P<tag>hook_context|system_reminder|system-reminder)>.*?(?:</(?P=tag)>|\Z)", re.DOTALL)



def strip_injected(text: str) -> str:
    """``text`` without ``<hook_context>`` / ``<system_reminder>`` blocks (an unclosed one runs to the end)."""
    return _INJECTED.sub("", text).strip() if "<" in text else text.strip()


@dataclass(frozen=True)
class Turn:
    """One kept entry of the conversation, already summarised (tool calls as short lines)."""

    n: int  # its index among the kept turns of the transcript (stable across incremental ingests)
    role: str  # "user" | "assistant" | "compact_summary"
    text: str
    timestamp: str


@dataclass
class ParseState:
    """What parsing carries from one part of a transcript to the next (for incremental ingest)."""

    turns: int = 0  # turns emitted so far
    malformed: int = 0
    skipped: int = 0
    summary_title: str = ""
    custom_title: str = ""
    first_prompt: str = ""
    session_id: str = ""
    cwd: str = ""
    git_branch: str = ""
    first_timestamp: str = ""
    last_timestamp: str = ""
    compactions: int = 0
    files_modified: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    tool_counts: dict[str, int] = field(default_factory=dict)
    pending_tools: dict[str, str] = field(default_factory=dict)  # tool_use id -> "Name target", until its result
    agent: str = ""  # the transcript's dialect (AGENTS), decided by its first recognisable line
    seen: list[str] = field(default_factory=list)  # the last SEEN_MAX record keys emitted (a dialect's dedup)

    def title(self) -> str:
        """The session title: the user's own title, else the summary line, else the first prompt."""
        return self.custom_title or self.summary_title or self.first_prompt or "Untitled session"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParseState:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if data and "agent" not in data:
            known["agent"] = CLAUDE  # a state saved before other agents were read: Claude Code's
        state = cls(**known)
        state.files_modified = list(state.files_modified)
        state.files_read = list(state.files_read)
        state.tool_counts = dict(state.tool_counts)
        state.pending_tools = dict(state.pending_tools)
        state.seen = list(state.seen)
        return state


ONE_LINE_WINDOW = 8192


def one_line(text: str, limit: int) -> str:
    """Redacted, whitespace collapsed to single spaces, cut to ``limit`` characters with an ellipsis.

    Redaction comes first: cutting first could leave half a secret that no pattern recognises. Only a
    window of ``limit`` + 8 KB is redacted (a 200 KB line of minified code is not scanned whole for a
    one-line summary); a one-line secret would need to be over 8 KB long to straddle its end.
    """
    flat = " ".join(redact(str(text)[: limit + ONE_LINE_WINDOW]).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def tool_target(name: str, data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    for key in ("file_path", "notebook_path", "path", "command", "pattern", "url", "query", "description", "prompt"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value, TARGET_MAX)
    return ""


class Dialect:
    """The base of the other agents' transcript readers (``transcript_codex`` …): the parser that feeds
    them lines (a :class:`~autology_mcp.sessions.transcript.TranscriptParser`: it emits the turns) and
    its state. A dialect's ``entry(line's object)`` returns the turns of one line."""

    def __init__(self, parser: Any):
        self.parser = parser
        self.state: ParseState = parser.state
