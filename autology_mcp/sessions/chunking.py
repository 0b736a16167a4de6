"""Turns into chunks: whole turns aggregated up to :data:`CHUNK_MAX` characters, title first.

A chunk's text is ``<session title>\\n<turns>``; the title is at most ``TITLE_MAX`` characters, so
the turns get the rest. Chunks break only between turns, except a turn too long for one chunk,
which is cut at paragraph, line, sentence or word boundaries into chunks of its own. Chunking is
a pure function of the turns: the same turns always give the same chunks (so chunk ids are stable,
and appending turns changes at most the last chunk and adds new ones; :class:`Chunker` does the same
step by step).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from autology_mcp.sessions.transcript import TITLE_MAX, Turn
from autology_mcp.sessions.turns import CLAUDE, CODEX, COPILOT, GEMINI

CHUNK_MAX = 1500
BODY_MAX = CHUNK_MAX - TITLE_MAX - 1  # room left after "<title>\n"
LABEL = {"user": "User", "compact_summary": "Summary of the earlier conversation"}
SPEAKER = {CLAUDE: "Claude", CODEX: "Codex", GEMINI: "Gemini", COPILOT: "Copilot"}  # who answered, by transcript dialect


def speaker(agent: str) -> str:
    """The name an agent's own turns are shown under: the agent that spoke (a record too old to name its
    agent is Claude Code's, as :meth:`ParseState.from_dict` reads it)."""
    return SPEAKER.get(agent or CLAUDE, "Assistant")


@dataclass(frozen=True)
class Chunk:
    n: int
    body: str  # the turns, without the title
    turn_start: int
    turn_end: int
    timestamp: str  # of the chunk's last turn

    def text(self, title: str) -> str:
        return f"{title}\n{self.body}"


def render_turn(turn: Turn, agent: str = CLAUDE) -> str:
    """``"<who>: <text>"``: User, the agent that answered (``agent``, a transcript dialect), or the summary."""
    label = speaker(agent) if turn.role == "assistant" else LABEL.get(turn.role, turn.role)
    return f"{label}: {turn.text}"


# a label back to its role: "User", the summary's, and any agent's name (or "Assistant") for an answer
_ROLE_OF = {label: role for role, label in LABEL.items()} | {name: "assistant" for name in (*SPEAKER.values(), "Assistant")}
_TURN_START = re.compile(r"^(" + "|".join(re.escape(label) for label in _ROLE_OF) + r"): ", re.MULTILINE)


def rendered_turns(body: str) -> list[tuple[str | None, str]]:
    """A chunk's body back into its turns, ``(role, text)`` (:func:`labelled_turns` without the labels)."""
    return [(role, text) for role, _label, text in labelled_turns(body)]


def labelled_turns(body: str) -> list[tuple[str | None, str | None, str]]:
    """A chunk's body back into its turns, ``(role, label, text)`` in order: the inverse of :func:`render_turn`
    joined by line breaks. A line that starts with a role's label ("User: ") starts a turn; text before
    the first such line (a later piece of a turn too long for one chunk) has the role None. A line of a
    turn's own text that starts with a label is read as a new turn (the rendering does not escape it)."""
    starts = list(_TURN_START.finditer(body))
    turns: list[tuple[str | None, str | None, str]] = []
    head = body[: starts[0].start()] if starts else body
    if head.strip():
        turns.append((None, None, head.strip("\n")))
    for i, found in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        turns.append((_ROLE_OF[found.group(1)], found.group(1), body[found.end():end].strip("\n")))
    return turns


def split_text(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters, at the best boundary available."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = -1
        for sep in ("\n\n", "\n", ". ", "; ", ", ", " "):
            at = window.rfind(sep)
            if at >= limit // 3:
                cut = at + len(sep.rstrip()) if sep.strip() else at
                break
        if cut <= 0:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


class Chunker:
    """Turns fed in order, chunks out: :func:`chunk_turns` as running state, so an index can take in
    a session's new turns without its old ones (issue 29). ``pending`` is the chunk still open (the
    last one, which later turns may extend); the state round-trips through :meth:`to_dict`."""

    def __init__(self, limit: int = BODY_MAX, n: int = 0, parts: list[str] | None = None, size: int = 0,
                 start: int = -1, end: int = -1, stamp: str = "", agent: str = CLAUDE):
        self.limit = limit
        self.agent = agent  # the transcript's dialect: whose name the answers are shown under
        self.n = n  # the number of the next chunk (the open one's, when there is one)
        self.parts = list(parts or [])
        self.size = size
        self.start = start
        self.end = end
        self.stamp = stamp  # the timestamp of the last turn that had one (a chunk's timestamp)

    def _flush(self) -> list[Chunk]:
        out = []
        if self.parts:
            out.append(Chunk(self.n, "\n".join(self.parts), self.start, self.end, self.stamp))
            self.n += 1
        self.parts, self.size, self.start = [], 0, -1
        return out

    def feed(self, turn: Turn) -> list[Chunk]:
        """The chunks this turn closes (the open one, and a long turn's own pieces)."""
        rendered = render_turn(turn, self.agent)
        if len(rendered) > self.limit:
            out = self._flush()
            for piece in split_text(rendered, self.limit):
                out.append(Chunk(self.n, piece, turn.n, turn.n, turn.timestamp))
                self.n += 1
            return out
        out = self._flush() if self.parts and self.size + 1 + len(rendered) > self.limit else []
        if self.start < 0:
            self.start = turn.n
        self.parts.append(rendered)
        self.size += len(rendered) + (1 if self.size else 0)
        self.end = turn.n
        self.stamp = turn.timestamp or self.stamp
        return out

    def pending(self) -> Chunk | None:
        """The open chunk as it stands (it stays open)."""
        return Chunk(self.n, "\n".join(self.parts), self.start, self.end, self.stamp) if self.parts else None

    def finish(self) -> list[Chunk]:
        return self._flush()

    def to_dict(self) -> dict[str, Any]:
        return {"limit": self.limit, "n": self.n, "parts": self.parts, "size": self.size, "start": self.start,
                "end": self.end, "stamp": self.stamp, "agent": self.agent}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunker:
        return cls(int(data.get("limit", BODY_MAX)), int(data.get("n", 0)), [str(p) for p in data.get("parts", [])],
                   int(data.get("size", 0)), int(data.get("start", -1)), int(data.get("end", -1)),
                   str(data.get("stamp", "")), str(data.get("agent") or CLAUDE))


def chunk_turns(turns: Iterable[Turn], limit: int = BODY_MAX, agent: str = CLAUDE) -> list[Chunk]:
    chunker = Chunker(limit, agent=agent)
    chunks: list[Chunk] = []
    for turn in turns:
        chunks += chunker.feed(turn)
    return chunks + chunker.finish()
