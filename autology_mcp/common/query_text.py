"""What a query is about (issue 37): the boilerplate a change description carries, taken out, and the
identifiers it names.

A prompt about a change is often a changelog line or a commit subject: "Add support for, adding
`typing_extensions.TypeIs`. Patch by Jelle Zijlstra (#123)". The person who wrote the patch, the
pull-request number and the conventional-commit type say nothing about what the change is, but a
person's name is rare, so full-text ranking weighs it most, and the record that lists that person
among its authors wins over the one about ``TypeIs``. So:

- :func:`without_boilerplate` takes out credits ("Patch by …", "Contributed by …", "Thanks to …", a
  parenthesis naming people such as "(Marc Mueller, PR 17382)" or "(@cdce8p)"), pull-request and
  issue numbers ("#3042", "PR 123", "gh-123", "bpo-123"), and a conventional-commit type ("feat:",
  "fix(validation):" keeps "validation"). Only those forms: "by default", a name asked about
  ("who is Jelle Zijlstra?") and "(setuptools v63 and older)" stay.
- :func:`identifier_words` names the words of the identifiers a query holds: backticked text,
  ``{{helper}}`` template forms, dotted names (``typing_extensions.TypeIs``,
  ``setup.py``), ``snake_case``, ``camelCase`` and ``PascalCase`` with an inner capital (``TypeIs``,
  ``LiteralString``), ``@decorator`` and ``--flag``. Node search weighs them most where a record's
  title, headings or identifiers hold them (:mod:`autology_mcp.knowledge.search`).

Both are plain rules on the text, chosen on the tuning part of bench/gate_eval.py's record domains.
"""

from __future__ import annotations

import re

from autology_mcp.common.text import NODE_STOP_WORDS, fts_text

_NAME_WORD = r"(?:@[\w-]+|[A-Z][\w'’.-]*)(?![\w'’.-])"
_SEP = r"(?:\s*(?:,|\band\b|&)\s*|\s+)"
_NAMES = rf"{_NAME_WORD}(?:{_SEP}{_NAME_WORD}){{0,6}}"
_REF = r"(?:(?:PR|pull request|issue|gh|GH|bpo)\s*[-#]?\s*\d+|#\d+)"
BOILERPLATE = [
    # "Patch by Jelle Zijlstra", "Contributed by A in gh-1.", "Thanks to …": to the end of the sentence
    re.compile(r"(?:\b(?:original |initial )?(?:patch(?:es)?|contributed|contribution|reported|suggested|"
               r"implemented|written|pr|fix(?:ed)?)\s+by|\bthanks?(?: you)?(?: to)?|\bco-authored-by:?|"
               r"\bsigned-off-by:?)\s+(?=\S)[^.;!?\n]*(?:[.;!?](?=\s|$))?", re.IGNORECASE),
    # "(Marc Mueller, PR 17382)", "(Shantanu, #123)", "(hamdanal, )": one to seven names, then a comma
    re.compile(rf"\(\s*(?:{_NAMES}|[\w-]+)\s*,\s*{_REF}?\s*\)"),
    # "(@cdce8p)"; "(Neil Schemenauer and Brian Schubert)", two names or more, at the end ("(TypeVarTuple)" stays)
    re.compile(rf"\(\s*@[\w-]+\s*\)|\(\s*{_NAME_WORD}{_SEP}{_NAMES}\s*\)\s*\.?\s*$"),
    # "(#3042)", "#3042", "PR 123", "gh-123", "bpo-123"
    re.compile(rf"\(\s*{_REF}\s*\)|\b{_REF}\b|(?<![\w&])#\d+\b"),
]
CONVENTIONAL_COMMIT = re.compile(
    r"^\s*(?:feat|fix|chore|docs?|refactor|tests?|ci|build|perf|style|revert)(?:\(([^)]*)\))?!?:\s*", re.IGNORECASE
)


def without_boilerplate(query: str) -> str:
    """``query`` without credits, pull-request and issue numbers and a conventional-commit type (the
    module docstring); ``query`` itself when nothing else would be left."""
    text = query.replace("\\_", "_")  # Markdown's escaped underscore: dataclass\_transform
    text = CONVENTIONAL_COMMIT.sub(lambda m: (m.group(1) or "") + " ", text)
    for pattern in BOILERPLATE:
        text = pattern.sub(" ", text)
    text = re.sub(r"\s+([.,;:!?])(?=\s|$)", r"\1", " ".join(text.split()))  # no space left before a full stop
    return text if re.search(r"[^\W_]", text) else query


_IDENTIFIERS = re.compile(
    r"`([^`\n]{1,200})`"  # `anything in backticks`
    r"|\{\{\s*([^{}\s]{1,80})"  # {{helper}} (Handlebars, Jinja)
    r"|(?<![\w.])(?:@|--)([A-Za-z][\w./-]*\w)"  # @decorator, @scope/package, --flag
    r"|\b([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)\b"  # dotted.names, setup.py
    r"|\b([A-Za-z][A-Za-z0-9]*_\w+)\b"  # snake_case
    r"|\b([a-z][a-z0-9]*[A-Z]\w*)\b"  # camelCase
    r"|\b([A-Z][a-z0-9]+[A-Z]\w*)\b"  # PascalCase with an inner capital: TypeIs, LiteralString
)
_WORD = re.compile(r"[^\W_]+")


def identifier_words(text: str) -> list[str]:
    """The words (as node search folds and splits them) of the identifiers ``text`` names, each once,
    in the order they first appear."""
    words: dict[str, None] = {}
    for match in _IDENTIFIERS.finditer(text.replace("\\_", "_")):
        found = next(g for g in match.groups() if g)
        words.update((w, None) for w in _WORD.findall(fts_text(found)) if w not in NODE_STOP_WORDS)
    return list(words)
