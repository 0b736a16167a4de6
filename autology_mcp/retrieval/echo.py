"""A query's own earlier copies are not evidence for it (issue 38).

Once a session is in session memory, asking the same thing again finds that session: a user turn
of it asked the same question, and its title is often that first prompt, so its chunks and its
handoff hold the whole subject ("what's a good recipe for banana bread?" grounded on the session
that asked it and got no recipe). A question is not an answer: a past session is evidence for a
query by what it answered or did, not by the user having asked it before.

So the evidence gate weighs a session hit (a chunk or a handoff) on its text without its **echoes**:

- an echo is a piece of the session the user wrote that says near-only what the query says: a user
  turn, the session title (the user's title, the transcript's summary line or the first prompt), a
  prompt the handoff's ``Asked:`` line lists. It is an echo when at least :data:`ECHO_SHARE` of its
  content words are words of the query: content words are the gate's subject terms (no function
  words, task words, one-letter words or bare numbers; :func:`autology_mcp.retrieval.gate.subject_terms`)
  without :data:`CHAT_WORDS`, the words a request is wrapped in ("can you please tell me …, thanks"),
  compared by their light stem. A piece with no content word holds no subject term and is kept.
- the hit's coverage is then computed on the rest: the assistant's turns, tool calls and results,
  compaction summaries, the handoff's ``Done``, ``Files touched`` and ``Decisions``, and the user
  turns that say something of their own ("we decided to cap retries at 5 because the bank rate-limits
  us" holds more than the query "how many retries?"). Its title coverage is 0 when the title is an
  echo, else the title's.

A session where the same question got a real answer still grounds the query, through that answer; a
session whose only match is the question does not. The rule changes a session hit's support (the
verdict, what the prompt hook injects, the proof line shown), never the ranking: session search's
order is its own. A user turn that states a decision in exactly the query's words ("use exponential
backoff for retries", asked later as "do we use exponential backoff for retries?") is an echo too;
the session's answer to it usually names the subject again.
"""

from __future__ import annotations

from dataclasses import dataclass

from autology_mcp.common.text import keyword_stem
from autology_mcp.retrieval.gate import subject_terms

ECHO_SHARE = 0.75  # a user's piece is an echo when at least this share of its content words are the query's
# The words a request to an assistant is wrapped in (what the prompt hook drops from a prompt before it
# searches, and a few greetings): a past prompt still carries them, the query does not.
CHAT_WORDS = frozenset(
    """please pls thanks thank thx cheers hi hey hello ok okay yes no sure tell explain show give help know
    think want wants need needs like just also really maybe perhaps actually kindly could would can shall
    might must me my mine us i im ive id quick question idea any anything something some again""".split()
)
ASKED = "Asked: "  # the handoff's line of the session's first prompts, " | " between them


def content_stems(text: str) -> set[str]:
    """The light stems of ``text``'s content words (the module docstring)."""
    return {keyword_stem(t) for t in subject_terms(text) if t not in CHAT_WORDS}


def is_echo(query_stems: set[str], text: str, share: float = ECHO_SHARE) -> bool:
    """Whether ``text`` says near-only what the query (its :func:`content_stems`) says."""
    own = content_stems(text)
    return bool(own) and len(own & query_stems) >= share * len(own)


@dataclass(frozen=True)
class Weighed:
    """What of a session hit the gate weighs: its text and its title without the echoes, and how many
    pieces were left out (``title_echo``: whether the title was one of them)."""

    text: str
    title: str
    echoes: int
    title_echo: bool


def without_echoes(query_stems: set[str], kind: str, title: str, text: str, share: float = ECHO_SHARE) -> Weighed:
    """A session chunk's or handoff's ``text`` (its ``title`` on the first line) without the user's
    pieces that echo the query."""
    from autology_mcp.sessions.chunking import LABEL, rendered_turns

    title_echo = bool(title) and is_echo(query_stems, title, share)
    body = text[len(title) + 1:] if title and text.startswith(title + "\n") else text
    kept: list[str] = [] if title_echo else [title]
    echoes = int(title_echo)
    if kind == "handoff":
        for line in body.split("\n"):
            if line.startswith(ASKED):
                prompts = line[len(ASKED):].split(" | ")
                mine = [p for p in prompts if not is_echo(query_stems, p, share)]
                echoes += len(prompts) - len(mine)
                line = ASKED + " | ".join(mine) if mine else ""
            if line:
                kept.append(line)
    else:
        for role, turn in rendered_turns(body):
            if role == "user" and is_echo(query_stems, turn, share):
                echoes += 1
                continue
            kept.append(f"{LABEL[role]}: {turn}" if role else turn)
    return Weighed("\n".join(kept), "" if title_echo else title, echoes, title_echo)
