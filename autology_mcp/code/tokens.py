"""Text normalization and tokenization shared by vectors, the lexical index and queries.

Normalize (seed 003): split camelCase, lowercase, turn punctuation into spaces. Tokens are
``[a-z0-9_/-]{2,64}`` minus stop words and numbers-only; a compound token (``reconnect_socket``,
``net/http``) also yields its parts, so ``reconnect socket`` meets ``reconnect_socket``.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CAMEL1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_PUNCT = re.compile(r"[^a-z0-9_/\-]+")
_TOKEN = re.compile(r"[a-z0-9_/\-]{2,64}")
_SPLIT = re.compile(r"[_/\-]+")
_WORD = re.compile(r"[A-Za-z0-9]+")

STOP_WORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it
    its may me my no not of on or our should so such than that the their them then there these they this
    to too up us was we were what when where which while who why will with would you your self def return
    import none true false else elif var let const function""".split()
)


def split_camel(text: str) -> str:
    return _CAMEL1.sub(r"\1 \2", _CAMEL2.sub(r"\1 \2", text))


def normalize(text: str) -> str:
    return _PUNCT.sub(" ", split_camel(text).lower())


def _keep(token: str) -> bool:
    return token not in STOP_WORDS and not token.replace("_", "").replace("-", "").replace("/", "").isdigit()


_expansions: dict[str, tuple[str, ...]] = {}


def _expand(raw: str) -> tuple[str, ...]:
    tok = raw.strip("_/-")
    if len(tok) < 2 or not _keep(tok):
        return ()
    if _SPLIT.search(tok):
        return (tok, *(p for p in _SPLIT.split(tok) if len(p) >= 2 and _keep(p)))
    return (tok,)


def tokenize(text: str) -> list[str]:
    """Vector features' unigrams, in order (compound tokens followed by their parts)."""
    out: list[str] = []
    cache = _expansions
    for raw in _TOKEN.findall(split_camel(text).lower()):  # same tokens as normalize(text): other chars separate
        exp = cache.get(raw)
        if exp is None:
            if len(cache) > 300_000:  # bound memory; it is only a cache
                cache.clear()
            exp = cache[raw] = _expand(raw)
        out.extend(exp)
    return out


def fts_text(text: str) -> str:
    """What the FTS5 tokenizer sees: camelCase split (it already splits on ``_`` and punctuation)."""
    return split_camel(text)


def query_words(query: str) -> list[str]:
    """Distinct lowercase words of a query for the lexical channels, stop words dropped, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(split_camel(query)):
        w = word.lower()
        if len(w) >= 2 and w not in STOP_WORDS and not w.isdigit():
            seen.setdefault(w, None)
    return list(seen)


@lru_cache(maxsize=65536)
def words(text: str) -> frozenset[str]:
    """The set of lowercase words in a name or path (camelCase, snake_case and separators split)."""
    return frozenset(w.lower() for w in _WORD.findall(split_camel(text)))
