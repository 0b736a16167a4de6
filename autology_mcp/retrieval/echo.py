"""A query's own earlier copies are not evidence for it (issue 38).

Once a session is in session memory, asking the same thing again finds that session: a user turn
of it asked the same question, and its title is often that first prompt, so its chunks and its
handoff hold the whole subject ("what's a good recipe for banana bread?" grounded on the session
that asked it and got no recipe). A question is not an answer: a past session is evidence for a
query by what it answered, did or stated, not by the user having asked it.

So the evidence gate weighs a session hit (a chunk or a handoff) as follows:

1. Each piece the user wrote (a user turn, the session title, a prompt the handoff's ``Asked:`` line
   lists) keeps only its **statements**: its questions are left out (:func:`is_question`: a sentence
   ending in a question mark, or typed without one: starting with why, how, what, which, who, where
   or when, with no comma and no full stop), and so is the whole piece when what is left is an
   **echo** of the query: at least
   :data:`ECHO_SHARE` of its content words are words of the query. Content words are the gate's
   subject terms (no function words, task words, one-letter words or bare numbers;
   :func:`autology_mcp.retrieval.gate.subject_terms`) without :data:`CHAT_WORDS`, the words a request
   is wrapped in ("can you please tell me …, thanks"), compared by their light stem.
2. **The rest** (the assistant's turns, tool calls and results, compaction summaries, the handoff's
   ``Done``, ``Files touched`` and ``Decisions``, and the user's own statements: "from now on
   retries stop after 5 attempts" holds more than the query "how many retries?") is weighed on its
   own when it holds at most :data:`CONTEXT_SHARE` of the subject's weight (the gate's
   :func:`~autology_mcp.retrieval.gate.coverage`): a session whose only match is the question does
   not ground it.
3. When the rest holds more of the subject than that, the hit is weighed whole, as before: the
   question gives the answer its subject ("User: how do we retry failed webhooks? Claude:
   ``WebhookRetrier``, 5 attempts" answers it though the answer never says "webhook").

Either way the proof line shown comes from the rest (the answer, not the question). The rule
changes a session hit's support (the verdict, what the prompt hook injects), never the ranking:
session search's order is its own. Measured on both sides on LoCoMo by bench/session_echo_eval.py
(docs/benchmarks.md). What it cannot tell: an answer that restates the question ("I can't find a
banana bread recipe in this repository") holds the subject and grounds it; a question typed without
a question mark and wrapped in chat ("hey, quick one: how do we … thanks") or starting with "can",
"do" or "is" reads as a statement, and counts when it is not an echo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autology_mcp.common.text import keyword_stem
from autology_mcp.retrieval.gate import Subject, coverage, subject_terms

ECHO_SHARE = 0.75  # a user's piece is an echo when at least this share of its content words are the query's
CONTEXT_SHARE = 0.2  # the rest must hold more than this share of the subject's weight for the questions to count
# (0.2 chosen on LoCoMo's tuning part among 0, 0.2 and 0.34: bench/session_echo_eval.py)
# The words a request to an assistant is wrapped in (what the prompt hook drops from a prompt before it
# searches, and a few greetings): a past prompt still carries them, the query does not.
CHAT_WORDS = frozenset(
    """please pls thanks thank thx cheers hi hey hello ok okay yes no sure tell explain show give help know
    think want wants need needs like just also really maybe perhaps actually kindly could would can shall
    might must me my mine us i im ive id quick question idea any anything something some again""".split()
)
ASKED = "Asked: "  # the handoff's line of the session's first prompts, " | " between them
_SENTENCE = re.compile(r"(?<=[.!?？。])\s+|\n")
_FIRST_WORD = re.compile(r"[^\W\d_]+(?:['’][a-z]+)?")
QUESTION_WORDS = frozenset("why how what what's whats which who whom whose where when".split())


def content_stems(text: str) -> set[str]:
    """The light stems of ``text``'s content words (the module docstring)."""
    return {keyword_stem(t) for t in subject_terms(text) if t not in CHAT_WORDS}


def is_question(sentence: str) -> bool:
    """A sentence ending in a question mark, or one typed without it: starting with a question word, with
    no comma and no full stop ("why do payment retries wait a random amount of time"; "When we moved, we
    dropped the cache" and "What we chose is Postgres." are statements)."""
    sentence = sentence.strip()
    if sentence.endswith(("?", "？")):
        return True
    first = _FIRST_WORD.match(sentence)
    return (bool(first) and first.group(0).lower() in QUESTION_WORDS and "," not in sentence
            and not sentence.endswith((".", "!", "。")))


def statements(text: str) -> str:
    """``text`` without its questions (:func:`is_question`); ``text`` itself when it asks none."""
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if not any(is_question(s) for s in sentences):
        return text
    return " ".join(s for s in sentences if not is_question(s))


def user_evidence(query_stems: set[str], text: str) -> str:
    """What a piece the user wrote holds as evidence for the query: its statements, none when they echo it."""
    said = statements(text)
    return "" if is_echo(query_stems, said) else said


def is_echo(query_stems: set[str], text: str) -> bool:
    """Whether ``text`` says near-only what the query (its :func:`content_stems`) says."""
    own = content_stems(text)
    return bool(own) and len(own & query_stems) >= ECHO_SHARE * len(own)


@dataclass(frozen=True)
class Weighed:
    """What of a session hit the gate weighs (``text``, ``title``), the text its proof line comes from
    (``proof``), and how many of the user's pieces lost something to the rule (0: none)."""

    text: str
    title: str
    proof: str
    echoes: int


def without_echoes(subject: Subject, query_stems: set[str], kind: str, title: str, text: str) -> Weighed:
    """A session chunk's or handoff's ``text`` (its ``title`` on the first line) as the gate weighs it
    (the module docstring): ``subject`` is the query's, ``query_stems`` its :func:`content_stems`."""
    from autology_mcp.sessions.chunking import labelled_turns

    echoes = 0

    def mine(piece: str) -> str:
        nonlocal echoes
        kept = user_evidence(query_stems, piece)
        echoes += kept.strip() != piece.strip()
        return kept

    said_title = mine(title) if title else ""
    body = text[len(title) + 1:] if title and text.startswith(title + "\n") else text
    kept: list[str] = [said_title] if said_title else []
    if kind == "handoff":
        for line in body.split("\n"):
            if line.startswith(ASKED):
                prompts = [p for p in (mine(p) for p in line[len(ASKED):].split(" | ")) if p]
                line = ASKED + " | ".join(prompts) if prompts else ""
            if line:
                kept.append(line)
    else:
        for role, label, turn in labelled_turns(body):
            if role == "user":
                turn = mine(turn)
                if not turn:
                    continue
            kept.append(f"{label}: {turn}" if label else turn)
    if not echoes:
        return Weighed(text, title, text, 0)
    rest = "\n".join(kept)
    if coverage(subject, rest) > CONTEXT_SHARE:  # the rest answers some of it: the question gives it its subject
        return Weighed(text, title, rest or text, echoes)
    return Weighed(rest, said_title, rest, echoes)
