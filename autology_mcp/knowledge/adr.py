"""The ADR format every ``decision`` node follows: Context, Decision, Alternatives, Consequences."""

from __future__ import annotations

import re

from autology_mcp.knowledge.markdown import mask_fenced_code

ADR_SECTIONS = ("Context", "Decision", "Alternatives", "Consequences")

# A section is a Markdown heading ("## Context", "### 2. Decision") or a bold label ("**Context**:"),
# outside fenced code (a record quoted in a code block has no sections of this one).
_SECTION = re.compile(
    r"^\s*(?:#{1,6}\s*(?:\d+[.)]\s*)?|\*\*\s*)"
    r"(context|decision|alternatives?(?:\s+considered)?|options(?:\s+considered)?|consequences)\b",
    re.IGNORECASE | re.MULTILINE,
)

ADR_TEMPLATE = """## Context
Why is a decision needed? What problem, constraints and forces are at play?

## Decision
What was decided, stated plainly.

## Alternatives
What else was considered, and why it was not chosen.

## Consequences
What follows from the decision: benefits, costs, risks, follow-up work."""


def adr_sections_present(content: str) -> set[str]:
    found: set[str] = set()
    for match in _SECTION.finditer(mask_fenced_code(content)):
        word = match.group(1).lower()
        if word.startswith(("alternative", "option")):
            found.add("Alternatives")
        else:
            found.add(word.capitalize())
    return found


def missing_adr_sections(content: str) -> list[str]:
    present = adr_sections_present(content)
    return [s for s in ADR_SECTIONS if s not in present]
