"""What every importer shares: reading a file's YAML front matter within a node's bounds, turning
free tags into valid ones, and the provenance key that makes a second run idempotent. Telling fenced
code from the Markdown around it (a heading in a code block is no section) is
:func:`autology_mcp.knowledge.markdown.mask_fenced_code`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(the YAML front matter as a dict, the rest). Refused or unreadable front matter reads as {}:
    the same bounds as a node's frontmatter (no alias bombs, no runaway nesting)."""
    match = _FRONT.match(text)
    if not match:
        return {}, text
    from autology_mcp.knowledge.markdown import _shape_problem

    if _shape_problem(match.group(1)):
        return {}, text[match.end():]
    import yaml

    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        data = None
    return (data if isinstance(data, dict) else {}), text[match.end():]


def tag_slugs(raw: Any) -> tuple[str, ...]:
    """Free tags (``Clojure``, ``message mapping``) as valid ones (``clojure``, ``message-mapping``)."""
    tags: list[str] = []
    for tag in raw if isinstance(raw, list) else []:
        slug = re.sub(r"[^a-z0-9]+", "-", str(tag).lower()).strip("-")[:64]
        if slug and slug not in tags:
            tags.append(slug)
    return tuple(tags[:32])


def source_key(store: Any, path: Path) -> str:
    """Where an imported item came from: relative to the project when inside it (the same on every clone)."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(store.root).as_posix()
    except ValueError:
        return str(resolved)


def counts(actions: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for action in actions:
        out[action] = out.get(action, 0) + 1
    return out


def imported_nodes(store: Any, source: str) -> dict[str, Any]:
    """The nodes an importer (``source``, e.g. ``import_adr``) wrote before, by where each came from."""
    return {n.extra.get("imported_from"): n for n in store.index.all_nodes() if n.source == source}


def action_for(existing: dict[str, Any], key: str, sha256: str) -> tuple[str, str | None]:
    """``create``, ``unchanged`` or ``update`` for the item from ``key`` with this content hash, and
    the id of the node it wrote before (None for a new item)."""
    node = existing.get(key)
    if node is None:
        return "create", None
    return ("unchanged" if node.extra.get("imported_sha256") == sha256 else "update"), node.id


def add_relation(store: Any, source_id: str, relation: Any) -> None:
    """Give the source node ``relation`` unless it has one of that target and type already (a re-run adds nothing)."""
    store.modify(source_id, lambda n: n if any(x.target == relation.target and x.type == relation.type
                                               for x in n.relations) else n.replace(relations=(*n.relations, relation)))
