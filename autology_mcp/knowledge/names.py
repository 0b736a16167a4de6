"""Naming a node the way a person does: a full id, a unique id prefix of at least 6 characters
(``34f7df65``), or its exact title (case aside). The CLI resolves every id argument through
:func:`resolve_node`; the MCP tools keep taking full ids (a model copies them)."""

from __future__ import annotations

import re

from autology_mcp.common.errors import NotFoundError, ValidationError
from autology_mcp.knowledge.node_index import NodeIndex

PREFIX_MIN = 6
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_PREFIX = re.compile(r"^[0-9a-fA-F-]+$")
_SHOWN = 10


def _candidates(rows: list[tuple[str, str]]) -> str:
    shown = "; ".join(f"{node_id[:8]} {title!r}" for node_id, title in rows[:_SHOWN])
    return shown + (f"; and {len(rows) - _SHOWN} more" if len(rows) > _SHOWN else "")


def resolve_node(index: NodeIndex, text: str, field: str = "id") -> str:
    """The full id ``text`` names. Raises ValidationError when it names several nodes (listing
    them) and NotFoundError when it names none."""
    name = " ".join(str(text).split())
    if not name:
        raise ValidationError(field, "is empty: give an id, an id prefix of 6+ characters, or a title")
    if _UUID.match(name):
        return name.lower()
    if len(name) >= PREFIX_MIN and _PREFIX.match(name):
        rows = index.ids_with_prefix(name.lower(), _SHOWN + 2)
        if len(rows) == 1:
            return rows[0][0]
        if len(rows) > 1:
            raise ValidationError(field, f"the prefix {name!r} names {len(rows)} nodes: {_candidates(rows)}; give more characters")
    rows = index.ids_with_title(name, _SHOWN + 2)
    if len(rows) == 1:
        return rows[0][0]
    if len(rows) > 1:
        raise ValidationError(field, f"{len(rows)} nodes are titled {name!r}: {_candidates(rows)}; give an id prefix")
    raise NotFoundError(f"{name!r} (no node has this id, id prefix or title)")
