"""Turns into chunks: whole turns aggregated up to :data:`CHUNK_MAX` characters, title first.

A chunk's text is ``<session title>\\n<turns>``; the title is at most ``TITLE_MAX`` characters, so
the turns get the rest. Chunks break only between turns, except a turn too long for one chunk,
which is cut at paragraph, line, sentence or word boundaries into chunks of its own. Chunking is
a pure function of the turns: the same turns always give the same chunks (so chunk ids are stable,
and appending turns changes at most the last chunk and adds new ones).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from autology_mcp.sessions.transcript import TITLE_MAX, Turn

CHUNK_MAX = 1500
BODY_MAX = CHUNK_MAX - TITLE_MAX - 1  # room left after "<title>\n"
LABEL = {"user": "User", "assistant": "Claude", "compact_summary": "Summary of the earlier conversation"}


@dataclass(frozen=True)
class Chunk:
    n: int
    body: str  # the turns, without the title
    turn_start: int
    turn_end: int
    timestamp: str  # of the chunk's last turn

    def text(self, title: str) -> str:
        return f"{title}\n{self.body}"


def render_turn(turn: Turn) -> str:
    return f"{LABEL.get(turn.role, turn.role)}: {turn.text}"


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


def chunk_turns(turns: Iterable[Turn], limit: int = BODY_MAX) -> list[Chunk]:
    chunks: list[Chunk] = []
    parts: list[str] = []
    size = 0
    start = end = -1
    stamp = ""

    def flush() -> None:
        nonlocal parts, size, start
        if parts:
            chunks.append(Chunk(len(chunks), "\n".join(parts), start, end, stamp))
        parts, size, start = [], 0, -1

    for turn in turns:
        rendered = render_turn(turn)
        if len(rendered) > limit:
            flush()
            for piece in split_text(rendered, limit):
                chunks.append(Chunk(len(chunks), piece, turn.n, turn.n, turn.timestamp))
            continue
        if parts and size + 1 + len(rendered) > limit:
            flush()
        if start < 0:
            start = turn.n
        parts.append(rendered)
        size += len(rendered) + (1 if size else 0)
        end = turn.n
        stamp = turn.timestamp or stamp
    flush()
    return chunks
