"""A dependency a node names, dropped from the requirement list it references (issue 38).

A span of ``setup.py``, ``setup.cfg``, ``pyproject.toml`` or a requirements file lists what the package
requires, one requirement a string or a line (``"watchgod>=0.6"``, ``click``). When a package the node names
(a word of its text, letter case and the ``-``, ``_``, ``.`` of its name aside) is required before and no more
after (``watchgod`` replaced by ``watchfiles``: "watchgod comes with [standard]"), what the node says of it no
longer holds, though the node never quoted the requirement's whole string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from autology_mcp.knowledge.trust.code_compare import Unit, held_strings

_PACKAGING = re.compile(r"(?:^|/)(?:setup\.py|setup\.cfg|pyproject\.toml|[\w.-]*requirements[\w.-]*\.(?:txt|in))$")
_SPEC = re.compile(r"([A-Za-z][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:(?:===|[<>=!~]=?)\s*[\w.*+!-]+\s*,?\s*)*"
                   r"(?:;.*)?")


def is_packaging(path: str) -> bool:
    return _PACKAGING.search(path) is not None


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _packages(units: Iterable[Unit]) -> set[str]:
    """The packages these units require: a string value, or a line that is a requirement (a requirements file's,
    ``setup.cfg``'s; a TOML list's ``"click",``)."""
    found = set()
    for u in units:
        for value in (*held_strings(u), u.text.strip().strip(",").strip("\"'")):
            match = _SPEC.fullmatch(value.strip())
            if match:
                found.add(_name(match.group(1)))
    return found


def dropped(before: Iterable[Unit], after: Iterable[Unit], text: str) -> list[str]:
    """The packages required by ``before`` and not by ``after`` that ``text`` (the node's) names."""
    named = {_name(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]", text)}
    return sorted(p for p in _packages(before) - _packages(after) if p in named)
