"""What every importer shares: reading a file's YAML front matter within a node's bounds, turning
free tags into valid ones, and the provenance key that makes a second run idempotent."""

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
