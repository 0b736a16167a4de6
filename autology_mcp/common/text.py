"""Text analysis: how each channel turns text and queries into terms, all in one place.

Every channel starts from one normalisation, :func:`fold` (case, Latin-script accents, Unicode
compatibility forms), and every FTS5 index and FTS5 query from :func:`fts_text` (``fold`` plus CJK
runs as overlapping bigrams), so ``naïve``, ``NAIVE`` and ``ｎａｉｖｅ`` are one word everywhere and a
hit one channel finds is never dropped by the verdict for an accent. Past that shared start, the
analyses still differ where a channel needs it:

| analysis | used by | words | identifiers | stemming | stop words |
|---|---|---|---|---|---|
| ``node_*`` | node search (``autology_query``), session search, the verdict's stop-word check | Unicode letters and digits | ``_`` separates words | the FTS5 index: Porter | :data:`NODE_STOP_WORDS`, dropped unless nothing else is left |
| ``code_*`` | the code index: FTS5 text, hashed vectors, query words, symbol and path words | Unicode letters and digits, ``_``, ``/``, ``-`` | camelCase split; ``snake_case`` and ``a/b`` kept whole and split | the FTS5 index: Porter | :data:`CODE_STOP_WORDS` (English and language keywords), numbers |
| ``keyword_*`` | unified retrieval: keyword coverage, proof lines, the verdict | Unicode, through :func:`node_query_terms` | camelCase and ``snake_case`` split | :func:`keyword_stem`, a light suffix stemmer; a term matches a word starting with its stem | as node search |
| ``claim_*`` | the claim check's support rule (docs/claim-check.md) | ASCII ``[A-Za-z0-9]`` after folding | camelCase split | :func:`claim_stem`, with code abbreviations mapped to words | :data:`CLAIM_STOP_WORDS` |

A query with letters or digits in no script (``🚀``, ``?!``) has no terms: node search answers with
nothing rather than every node, code search says it has no searchable words.

The FTS5 tokenizers of the three SQLite indexes are here too (:data:`NODE_FTS_TOKENIZER`, ...):
changing one, or :func:`fts_text`, means rebuilding that index (bump its schema version).
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from functools import lru_cache
from itertools import chain

# ------------------------------------------------------------------------------ one normalisation
# Every channel and the verdict see text through :func:`fold` (and the FTS5 indexes through
# :func:`fts_text`): ``Café``, ``CAFE``, ``café`` and ``ｃａｆé`` are one word, so a hit one channel
# finds is never dropped by another for an accent. Runs of CJK characters, which have no spaces,
# become overlapping bigrams (``日本語`` -> ``日本 本語``), so a word inside a run is found.

_COMBINING = re.compile("[\u0300-\u036f]+")  # accents and other marks on Latin, Greek, Cyrillic
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def fold(text: str) -> str:
    """Lowercase, compatibility forms unified (full-width letters, ligatures), Latin-script accents removed."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFKD", text))).lower()


def _bigrams(match: re.Match[str]) -> str:
    run = match.group()
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def cjk_bigrams(text: str) -> str:
    """Each run of Chinese, Japanese or Korean characters as its overlapping bigrams, space separated."""
    if text.isascii():
        return text
    return _CJK_RUN.sub(_bigrams, text)


def fts_text(text: str) -> str:
    """What an FTS5 index is given for ``text`` (and what a query is matched as): folded, CJK as bigrams."""
    return cjk_bigrams(fold(text))


# ------------------------------------------------------------------------------ node search


NODE_FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
SESSION_FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"  # session chunks are searched like nodes
NODE_QUERY_TERMS_MAX = 24

NODE_STOP_WORDS = frozenset(
    """a an and are as at be but by do does did for from has have how i if in into is it its of on or our
    so that the their them then there these this those to was we were what when where which who why will
    with you your""".split()
)

_NODE_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def node_query_terms(query: str) -> list[str]:
    """Folded word terms of a query for node and session search (CJK runs as bigrams), stop words
    dropped (unless nothing else is left), at most :data:`NODE_QUERY_TERMS_MAX`. Empty when the
    query has no letters or digits at all (``🚀``)."""
    words = _NODE_WORD.findall(fts_text(query))
    terms = [w for w in words if w not in NODE_STOP_WORDS] or words
    return list(dict.fromkeys(terms))[:NODE_QUERY_TERMS_MAX]


# ------------------------------------------------------------------------------ the code index
# Normalize (seed 003): split camelCase, lowercase, turn punctuation into spaces. Tokens are
# ``[a-z0-9_/-]{2,64}`` minus stop words and numbers-only; a compound token (``reconnect_socket``,
# ``net/http``) also yields its parts, so ``reconnect socket`` meets ``reconnect_socket``.

CODE_FTS_TOKENIZER = "porter unicode61"

CODE_STOP_WORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it
    its may me my no not of on or our should so such than that the their them then there these they this
    to too up us was we were what when where which while who why will with would you your self def return
    import none true false else elif var let const function""".split()
)

_CAMEL1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
# The same two splits as lookaheads with a replacement function: no template to expand per match
# (Python-level in 3.11), so split_camel runs ~40% faster; the output is identical (tested).
_CAMEL1_AT = re.compile(r"[a-z0-9](?=[A-Z])")
_CAMEL2_AT = re.compile(r"[A-Z](?=[A-Z][a-z])")
_CODE_PUNCT = re.compile(r"[^\w/\-]+")
_CODE_TOKEN = re.compile(r"[\w/\-]{2,64}")
_CODE_SPLIT = re.compile(r"[_/\-]+")
_CODE_WORD = re.compile(r"[^\W_]+")


def _space_after(match: re.Match[str]) -> str:
    return match.group() + " "


def split_camel(text: str) -> str:
    """``parseHTTPResponse`` -> ``parse HTTP Response`` (the code index and the claim check)."""
    return _CAMEL1_AT.sub(_space_after, _CAMEL2_AT.sub(_space_after, text))


def code_normalize(text: str) -> str:
    return _CODE_PUNCT.sub(" ", fts_text(split_camel(text)))


def _code_keep(token: str) -> bool:
    return token not in CODE_STOP_WORDS and not token.replace("_", "").replace("-", "").replace("/", "").isdigit()


class _Expansions(dict):
    """word -> the tokens it yields, filled on first use: :func:`_code_expand` of each token
    :data:`_CODE_TOKEN` finds in it (a word of 2-64 token characters is one such token)."""

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(self) > 300_000:  # bound memory; it is only a cache
            self.clear()
        if 2 <= len(word) <= 64:  # a run of token characters: itself the one token _CODE_TOKEN finds
            exp = self[word] = _code_expand(word)
        else:
            exp = self[word] = tuple(chain.from_iterable(map(_code_expand, _CODE_TOKEN.findall(word))))
        return exp


_code_expansions = _Expansions()


def _code_expand(raw: str) -> tuple[str, ...]:
    tok = raw.strip("_/-")
    if len(tok) < 2 or tok in CODE_STOP_WORDS:
        return ()
    if "_" not in tok and "-" not in tok and "/" not in tok:  # one part (the common case, tested)
        return () if tok.isdigit() else (tok,)
    if not _code_keep(tok):
        return ()
    return (tok, *(p for p in _CODE_SPLIT.split(tok) if len(p) >= 2 and _code_keep(p)))


def code_tokens(text: str) -> list[str]:
    """The hashed vectors' unigrams, in order (compound tokens followed by their parts)."""
    return code_tokens_of_fts(code_fts_text(text))  # same tokens as code_normalize(text)


def code_tokens_of_fts(normalized: str) -> list[str]:
    """:func:`code_tokens` of a text already put through :func:`code_fts_text` (the index builder
    normalises each chunk once, for its FTS5 body and its vector)."""
    return list(chain.from_iterable(map(_code_expansions.__getitem__, _code_words(normalized))))


# Every ASCII byte that is not a token character (:data:`_CODE_TOKEN`: letters, digits, ``_``, ``/``, ``-``)
# becomes a space, so splitting on whitespace gives the runs of token characters.
_ASCII_NOT_TOKEN = bytes.maketrans(
    bytes(range(128)), bytes(c if chr(c).isalnum() or chr(c) in "_/-" else 32 for c in range(128)))


def _code_words(normalized: str) -> list[str]:
    """The runs of token characters in ``normalized``, whose expansions are its tokens (a run longer
    than 64 characters expands to the tokens :data:`_CODE_TOKEN` finds in it, a 1-character run to
    none). ASCII text, nearly all code, is split with ``bytes.translate``, about three times faster
    than the regex; the tokens are the same (tested)."""
    if normalized.isascii():
        return normalized.encode("ascii").translate(_ASCII_NOT_TOKEN).decode("ascii").split()
    return _CODE_TOKEN.findall(normalized)


def code_fts_text(text: str) -> str:
    """What the code index's FTS5 tokenizer sees: camelCase split (it already splits on ``_`` and
    punctuation), then :func:`fts_text`."""
    return fts_text(split_camel(text))


def code_query_words(query: str) -> list[str]:
    """Distinct lowercase words of a query for the code index's lexical channels, stop words dropped, in order."""
    seen: dict[str, None] = {}
    for w in _CODE_WORD.findall(fts_text(split_camel(query))):
        if len(w) >= 2 and w not in CODE_STOP_WORDS and not w.isdigit():
            seen.setdefault(w, None)
    return list(seen)


_IDENT_WORD = re.compile(r"[A-Za-z0-9_]+")  # an identifier is one of these not starting with a digit
# Where a version number may start: not after a word character or a dot, or after a lone "v" (v2.31.0).
_VERSION_START = r"(?:(?<![\w.])|(?<=[vV])(?<![\w.][vV]))"
# A version number: two or more numbers joined by dots, not inside a longer word or number; its first
# two are matched (``0.12.2`` -> ``0.12``, which ``0.12.1`` and ``__version__ = "0.12.0"`` hold).
_VERSION = re.compile(_VERSION_START + r"(\d{1,4}\.\d{1,4})(?:\.\d+)*(?!\w)")
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]{2}")


def code_identifiers(query: str) -> list[str]:
    """The query's identifier-shaped words, lowercased, to be matched whole and unstemmed: an inner
    or leading ``_`` (``pytest_addopts``, ``PYTEST_ADDOPTS``, ``_preparse``), an inner capital
    (``iterBytes``, ``HTTPError``; not a plural like ``URLs``), any word of 3+ characters written
    in backticks (`` `binascii` ``), or a version number's first two parts (``Python 3.10`` -> ``3.10``,
    ``Release 0.12.2`` -> ``0.12``: the code index's words leave numbers out). Plain words are left
    to the stemmed channels."""
    found: dict[str, None] = {}
    for m in _BACKTICKED.finditer(query):
        for w in _IDENT_WORD.findall(m.group(1)):
            if len(w.strip("_")) >= 3 and not w[0].isdigit():
                found.setdefault(w.lower(), None)
    for w in _IDENT_WORD.findall(query):
        core = w.strip("_")
        if w[0].isdigit():
            continue
        if len(core) >= 3 and ("_" in core or w.startswith("_") or _INNER_CAPITAL.search(core)):
            found.setdefault(w.lower(), None)
    for m in _VERSION.finditer(query):
        found.setdefault(m.group(1), None)
    return list(found)


def identifier_pattern(identifiers: list[str]) -> re.Pattern[str] | None:
    """Finds any of ``identifiers`` whole (not inside a longer name, nor a version number after a dot:
    ``3.10`` is not in ``13.10`` or ``1.3.10``), ignoring case."""
    if not identifiers:
        return None
    ordered = sorted(identifiers, key=len, reverse=True)
    names = "|".join(re.escape(i) for i in ordered if not i[0].isdigit())
    versions = "|".join(re.escape(i) for i in ordered if i[0].isdigit())
    starts = ([rf"(?<![A-Za-z0-9_])(?:{names})"] if names else []) + ([rf"{_VERSION_START}(?:{versions})"] if versions else [])
    return re.compile(rf"(?:{'|'.join(starts)})(?![A-Za-z0-9_])", re.IGNORECASE)


def identifier_phrase(identifier: str) -> list[str]:
    """The words FTS5 sees for one identifier, in order (``pytest_addopts`` -> pytest, addopts)."""
    return _CODE_WORD.findall(fts_text(split_camel(identifier)))


@lru_cache(maxsize=65536)
def name_words(text: str) -> frozenset[str]:
    """The set of lowercase words in a symbol name or path (camelCase, snake_case and separators split)."""
    return frozenset(_CODE_WORD.findall(fts_text(split_camel(text))))


# ------------------------------------------------------------------------------ unified retrieval's keywords
# A query term is reduced to a light stem (``parsing``, ``parser`` and ``parse`` all stem to
# ``pars``), and it matches a word of the text that starts with that stem and goes on for at most
# five more letters, so coverage does not depend on which tokenizer indexed the text.

_KEYWORD_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "ly", "s")
# "-able" joins "configurable" to "configured" and "serializable" to "serialized", only when five
# letters or more are left: "table", "disable", "variable" ("vari" would match "various") keep it
_ABLE_MIN_STEM = 5


@lru_cache(maxsize=65536)
def keyword_stem(word: str) -> str:
    w = word.lower()
    if w.endswith("able") and len(w) - 4 >= _ABLE_MIN_STEM:
        return w[:-4]
    for suffix in _KEYWORD_SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def keyword_terms(query: str) -> list[str]:
    """The query's keyword terms: lowercase words, stop words dropped, camelCase and snake_case split."""
    return node_query_terms(_CAMEL1.sub(r"\1 \2", query).replace("_", " "))  # folded there


@lru_cache(maxsize=4096)
def keyword_pattern(term_stem: str) -> re.Pattern[str]:
    """A word starting with the stem, followed by at most a suffix's worth of letters."""
    return re.compile(r"(?<![^\W_])" + re.escape(term_stem) + r"[^\W\d_]{0,5}(?![^\W_])")


@lru_cache(maxsize=64)
def keyword_text(text: str) -> str:
    """The text as keyword terms are matched against it: camelCase split, snake_case split, lowercase.

    The last few are kept: one search reads a hit's text three times (its keyword share, the evidence
    gate, its proof lines), and a long record costs milliseconds each time."""
    return fts_text(_CAMEL1.sub(r"\1 \2", text).replace("_", " "))


def keyword_coverage(term_stems: list[str], text: str) -> tuple[float, list[str]]:
    """Share of the query's terms found in ``text``, and which (by stem): a term is found when a
    word of the text starts with its stem and goes on for at most five more letters."""
    if not term_stems:
        return 0.0, []
    hay = keyword_text(text)
    matched = [t for t in term_stems if keyword_pattern(t).search(hay)]
    return len(matched) / len(term_stems), matched


# ------------------------------------------------------------------------------ Porter stems


class _PorterStemmer:
    """FTS5's own Porter stemmer (``NODE_FTS_TOKENIZER``), read back through ``fts5vocab`` from a
    private in-memory table, so a stem here is exactly the one the full-text indexes store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def stems(self, words: list[str]) -> list[str]:
        with self._lock:
            if self._db is None:
                self._db = sqlite3.connect(":memory:", check_same_thread=False)
                self._db.execute(f"CREATE VIRTUAL TABLE s USING fts5(w, tokenize='{NODE_FTS_TOKENIZER}')")
                self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
            self._db.execute("DELETE FROM s")
            self._db.executemany("INSERT INTO s(rowid, w) VALUES (?, ?)", enumerate(words))
            found: dict[int, list[str]] = {}
            for doc, term in self._db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
                found.setdefault(doc, []).append(term)
        # a word the tokenizer splits or drops (punctuation) is kept as it is, lowercased
        return [found[i][0] if len(found.get(i, ())) == 1 else w.lower() for i, w in enumerate(words)]


_porter = _PorterStemmer()
_porter_cache: dict[str, str] = {}


def porter_stems(words: list[str]) -> list[str]:
    """The Porter stem FTS5 gives each word (``retries`` → ``retri``, ``parsing`` → ``pars``); the
    words not met before are stemmed together, in one statement."""
    known = {w: _porter_cache.get(w) for w in dict.fromkeys(words)}  # read once: another thread may clear it
    new = [w for w, stem in known.items() if stem is None]
    if new:
        stems = dict(zip(new, _porter.stems(new)))
        known.update(stems)
        if len(_porter_cache) + len(new) > 200_000:  # bound memory; it is only a cache
            _porter_cache.clear()
        _porter_cache.update(stems)
    return [known[w] for w in words]


def porter_stem(word: str) -> str:
    return porter_stems([word])[0]


# ------------------------------------------------------------------------------ the claim check

CLAIM_FILLER_WORDS = frozenset(
    """code file files function functions method methods class classes line lines here also just very
    some any all each every one ones thing things way ways make makes made use uses used using via per
    should must can could would need needs over about through only other more most both same own again
    once given specified provided optionally whether otherwise certain various etc""".split()
)
# Abbreviations code uses for words prose spells out: both map to the same stem.
CLAIM_ALIASES = dict(
    pair.split(":")
    for pair in """ctx:context cmd:command msg:message env:environment arg:argument argv:argument param:parameter
    attr:attribute info:information cfg:configuration conf:configuration dir:directory err:error exc:exception
    obj:object opt:option val:value num:number str:string len:length idx:index cb:callback req:request
    resp:response tmp:temporary temp:temporary prev:previous src:source dst:destination dest:destination
    ref:reference doc:document pkg:package db:database auth:authentication repo:repository app:application
    spec:specification util:utility fn:function func:function""".split()
)
CLAIM_STOP_WORDS = (CODE_STOP_WORDS | NODE_STOP_WORDS | CLAIM_FILLER_WORDS) - {"return", "none", "true", "false"}

_CLAIM_WORD = re.compile(r"[A-Za-z0-9]+")


def claim_normals(words: list[str]) -> list[str]:
    """Each word's stem (FTS5's Porter stem, as the full-text indexes store it), with a code
    abbreviation (``ctx``, ``params``) mapped to the stem of the word it stands for."""
    stems = porter_stems(words)
    fulls = {s: CLAIM_ALIASES[s] for s in stems if s in CLAIM_ALIASES}
    full_stems = dict(zip(fulls, porter_stems(list(fulls.values()))))
    return [full_stems.get(s, s) for s in stems]


def claim_normal(word: str) -> str:
    return claim_normals([word])[0]


def claim_words(text: str) -> list[str]:
    """The lowercase ASCII words of a claim or a span, camelCase split, accents folded."""
    return _CLAIM_WORD.findall(fold(split_camel(text)))
