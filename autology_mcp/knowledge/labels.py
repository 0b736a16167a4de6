"""What names a record besides its title and tags: the label fields node search weighs (issue 37).

- **compounds**: each pair of adjacent title words written as one, so ``dataclass_transform`` and
  ``LiteralString`` in a query meet the titles "Data Class Transforms" and "Arbitrary Literal String
  Type";
- **identifiers**: the identifiers its text names (backticked text, dotted names, ``snake_case``,
  ``camelCase`` and ``PascalCase`` with an inner capital), as :func:`~autology_mcp.common.query_text.identifier_words`
  finds them in a query.

Each is plain text for the ``nodes_labels`` FTS5 table (:mod:`autology_mcp.knowledge.node_index`),
folded like every indexed text (:func:`~autology_mcp.common.text.fts_text`). The content's section
headings were measured as a field too, and raised no weight's mean tuning MRR over the three domains
(docs/retrieval.md): they are not one.
"""

from __future__ import annotations

import re

from autology_mcp.common.query_text import identifier_words
from autology_mcp.common.text import fts_text

IDENTIFIERS_MAX = 400  # distinct identifier words kept, in the order they first appear
_WORD = re.compile(r"[^\W_]+")


def compounds(title: str) -> str:
    """Each pair of adjacent words of the title, written as one word."""
    words = _WORD.findall(fts_text(title))
    return " ".join(a + b for a, b in zip(words, words[1:]))


def identifiers(content: str) -> str:
    """The words of the identifiers the content names (at most :data:`IDENTIFIERS_MAX` distinct ones)."""
    return " ".join(identifier_words(content)[:IDENTIFIERS_MAX])
