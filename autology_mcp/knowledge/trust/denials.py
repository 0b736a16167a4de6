"""What a node says the code does not have, found in the code later (issue 38).

A node can state an absence: "A `match` statement is not among them", "`retry` is never called
here". Such a sentence holds as long as the code lacks the name; when the referenced code gains it
(``elif n.type == syms.match_stmt:``), what the node says no longer holds. A denied name is one in
backticks, a single identifier of three letters or more (or its bare call, `dump()`; of a dotted name, its last
part: "not a `contextlib.ContextDecorator`" denies ``ContextDecorator``), with a negation ("not", "never", "no",
"n't", "nor", "neither") within four words of it in the same sentence, outside a quoted message (in
"refuses it with an `AssertionError` ("doesn't support Union types")" the negation is the message's,
not the node's: the node says the code has the name); ``None``, ``True`` and
``False`` are values, not names. A name given alone in parentheses after the words that deny it, as the
code's word for what they describe ("There is no context-aware variant (pgettext)"), is denied too; not a
call's argument (``Exit(code)``), nor a word in parentheses the negation only follows. The code holds it
when an identifier of it (comments aside) has it as a whole word or as a part between underscores
(``match_stmt`` holds ``match``): a name is often spelled inside a longer one.
"""

from __future__ import annotations

import re

from autology_mcp.knowledge.trust.findings import _shown

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# `dump`, `dump()`, or a dotted name whose last part is denied (`contextlib.ContextDecorator`)
_TICKED = re.compile(r"`(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]{2,})(?:\(\))?`")
_ASIDE = re.compile(r"(?:^|(?<=\s))\(([A-Za-z_][A-Za-z0-9_]{2,})\)")  # "a variant (pgettext)", not "Exit(code)"
_NEGATION = re.compile(r"^(?:not|never|no|nor|neither|\w+n't)$", re.IGNORECASE)
_WORD = re.compile(r"[\w']+")
_QUOTED = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d')
_VALUES = frozenset({"None", "True", "False"})
NEAR = 4  # words between the name and the negation, at most


def denied(text: str) -> set[str]:
    """The names the text says, in backticks beside a negation or in an aside after one, the code does not have."""
    out: set[str] = set()
    for sentence in _SENTENCE.split(text):
        own = _QUOTED.sub(lambda q: " " * len(q.group(0)), sentence)  # the node's words, not a message's
        for m in _TICKED.finditer(sentence):
            name = m.group(1)
            if name in _VALUES:
                continue
            before = _WORD.findall(own[:m.start()])[-(NEAR + 1):]
            after = _WORD.findall(own[m.end():])[:NEAR + 1]
            if any(_NEGATION.match(w) for w in before + after):
                out.add(name)
        for m in _ASIDE.finditer(own):
            name = m.group(1)
            if name not in _VALUES and any(_NEGATION.match(w) for w in _WORD.findall(own[:m.start()])[-(NEAR + 1):]):
                out.add(name)
    return out


def holds_part(code: str, name: str) -> bool:
    """Whether ``code`` has ``name`` as a word or as an underscore-separated part of one (``match`` in
    ``match_stmt``; not in ``rematch`` or ``matches``)."""
    if name not in code:
        return False
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", code) is not None


def now_held(text: str, before_code: str, now_code: str) -> list[str]:
    """The names ``text`` denies that ``before_code`` did not hold and ``now_code`` does."""
    return sorted(n for n in denied(text) if not holds_part(before_code, n) and holds_part(now_code, n))


def now_there(names: list[str], where: str) -> str:
    """The flag's words for names the node says the code has not, found in ``where`` ("it", a path) now."""
    return f"{_shown(names)}, which the node says it has not, {'is' if len(names) == 1 else 'are'} in {where} now"
