"""The evidence gate: is a hit about the query's subject, and does the memory know the subject at all?

Seed 001's evidence gates, calibrated as selective prediction (issue 28). Everything here is plain
arithmetic on the query's words and the hits' texts; the statistics come from the indexes
(:func:`autology_mcp.retrieval.channels.term_counts`).

- **The subject** is the query's keyword terms, one-letter words, bare numbers, function words and the
  words a task is phrased in left out (the ``s`` of "it's", a PR number; "per", "than", "should";
  "add", "fix", "change", "support": in "add retries to the upload client" the subject is retries
  and the upload client, and a small project that never wrote "add" would otherwise count the word
  against every hit, while a symbol named ``init_per_thread_state`` would hold "per"). Each term weighs ``ln(1 + M / (1 + df))``: ``df`` is how many
  documents of the memory in scope (nodes, code and doc chunks, session documents) hold it, ``M`` how
  many hold any of the query's terms. A word most matching documents share ("type" in a typing
  project, "message" in a messaging library) weighs little; a rare one decides; a word the memory
  never mentions (a person's name, a product, an identifier that is not here) weighs most, and no hit
  can hold it, so it counts against every hit. ``M`` rather than the whole memory's size: adding
  documents that hold none of the query's words changes nothing here.
- **A hit's coverage** is the weighted share of the subject its text holds; its **title coverage**
  the share its title and tags (a node) or its path and symbol (a chunk) hold. A term is held when a
  word of the text has the same light stem, or, for a stem of five letters or more, starts with it
  and runs at most five letters on ("configur" meets "configuration"). The retrieval's keyword share
  also lets a short stem start a longer word; here it may not, or "he" would meet "help", "sho"
  (shoes) "should", and "mil" (Milly) "million".
- **A hit's support** (0-1) is ``σ(a · coverage + b · title coverage − u · unknown share + c)``, the
  unknown share being the weight of the terms the memory never mentions. The four numbers were fitted
  by logistic regression on the tuning part of bench/gate_eval.py's sets (on-topic prompts against
  prompts no project answers): :data:`SUPPORT_WEIGHTS`.
- **The answer's confidence** is its best hit's support. ``grounded`` needs it to reach
  ``gate_threshold``; each item the prompt hook injects (and each item the context bundle lists) needs
  its own support to reach ``gate_item_threshold`` (``[tool.autology.retrieval]``, docs/retrieval.md).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from functools import lru_cache
from dataclasses import dataclass

from autology_mcp.common.text import keyword_stem, keyword_terms, keyword_text

# (coverage, title coverage, unknown share, intercept): fitted on the tuning part of bench/gate_eval.py
SUPPORT_WEIGHTS = (4.58, 7.94, -3.21, -4.99)
PREFIX_STEM_MIN = 5  # a stem this long may start a longer word; a shorter one must be the word's own stem
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Subject:
    """The query's subject: its terms by stem with their weights, and what the memory never mentions."""

    weights: dict[str, float]  # stem -> weight
    unknown: tuple[str, ...]  # terms no document in scope holds
    unknown_share: float  # their share of the total weight

    @property
    def total(self) -> float:
        return sum(self.weights.values())


# The words a change or a request is phrased in, whatever it is about (matched by their light stem).
TASK_WORDS = frozenset(keyword_stem(w) for w in """add change fix update remove delete rename refactor implement
    improve make use allow enable disable create write move replace clean bump drop introduce prevent avoid ensure
    support handle new now also still get set let try""".split())


# English function words the keyword terms keep (their stop words are fewer): they name no subject.
FUNCTION_WORDS = frozenset("""about above after again against all any because before below between both can could did
    down during each few further here just more most much must no nor not off once only other over own same should
    some such than too under until up very via per would yet may might shall will""".split())


def subject_terms(query: str) -> list[str]:
    """The query's terms that can name a subject: keyword terms without one-letter words, bare numbers,
    :data:`FUNCTION_WORDS` and :data:`TASK_WORDS`."""
    return [t for t in keyword_terms(query) if len(t) > 1 and not t.isdigit() and t not in FUNCTION_WORDS
            and keyword_stem(t) not in TASK_WORDS]


def subject(terms: list[str], df: dict[str, int], matching: int) -> Subject:
    """The subject of ``terms`` given each term's document frequency ``df`` and the number of documents
    holding any of them (``matching``)."""
    weights: dict[str, float] = {}
    known: dict[str, bool] = {}
    for term in terms:
        stem = keyword_stem(term)
        count = df.get(term, 0)
        weights[stem] = max(weights.get(stem, 0.0), math.log(1.0 + matching / (1.0 + count)))
        known[stem] = known.get(stem, False) or count > 0
    total = sum(weights.values())
    unknown = tuple(dict.fromkeys(t for t in terms if not known[keyword_stem(t)]))
    share = sum(w for s, w in weights.items() if not known[s]) / total if total else 0.0
    return Subject(weights, unknown, share)


def held(stems, text: str) -> set[str]:
    """Which of ``stems`` a word of ``text`` holds (see the module docstring for the rule). The text's
    distinct words are sorted once; each stem then looks only at the words that start with it."""
    if not text:
        return set()
    words = _sorted_words(text)
    found = set()
    for stem in stems:
        at = bisect_left(words, stem)
        while at < len(words) and words[at].startswith(stem):
            word, at = words[at], at + 1
            rest = word[len(stem):]
            if len(rest) <= 5 and (not rest or rest.isalpha() and (len(stem) >= PREFIX_STEM_MIN or keyword_stem(word) == stem)):
                found.add(stem)
                break
    return found


@lru_cache(maxsize=64)
def _sorted_words(text: str) -> list[str]:
    return sorted(set(_WORD.findall(keyword_text(text))))


def coverage(s: Subject, text: str) -> float:
    """The weighted share of the subject that ``text`` holds (0 when the subject weighs nothing)."""
    total = s.total
    if total <= 0.0:
        return 0.0
    return sum(s.weights[stem] for stem in held(s.weights, text)) / total


def support(text_coverage: float, title_coverage: float, unknown_share: float) -> float:
    """How likely a hit is about the query's subject, 0-1 (:data:`SUPPORT_WEIGHTS`)."""
    a, b, u, c = SUPPORT_WEIGHTS
    z = a * text_coverage + b * title_coverage + u * unknown_share + c
    return 1.0 / (1.0 + math.exp(-z))
