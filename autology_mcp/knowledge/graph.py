"""The relation graph: the spec's ``graph/index.json`` and the in-memory NetworkX graph.

Both are derived from the relations in the nodes' frontmatter. ``index.json`` is rewritten
atomically whenever a relation changes and rebuilt when it is missing, stale or corrupt; the
NetworkX ``MultiDiGraph`` (one edge per relation, keyed by relation type) is built on demand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from json.encoder import encode_basestring as _encode_str  # what json.dumps(ensure_ascii=False) uses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.knowledge.models import RelationRecord, format_timestamp

if TYPE_CHECKING:
    import networkx as nx

GRAPH_INDEX_VERSION = "1.0"


def relation_dict(r: RelationRecord) -> dict[str, Any]:
    data: dict[str, Any] = {"source": r.source, "target": r.target, "type": r.type.value}
    if r.description:
        data["description"] = r.description
    data["confidence"] = r.confidence
    return data


def relation_line(source: str, target: str, type_: str, description: str | None, confidence: float) -> str:
    """One relation's line of ``index.json``: exactly ``json.dumps(relation_dict(r), ensure_ascii=False)``
    indented, built directly (this runs for every relation whenever the file is rewritten)."""
    described = f'"description": {_encode_str(description)}, ' if description else ""
    return (
        f'    {{"source": {_encode_str(source)}, "target": {_encode_str(target)}, "type": {_encode_str(type_)}, '
        f'{described}"confidence": {float(confidence)!r}}}'
    )


def render_graph_index_lines(lines: Iterable[str], last_updated: datetime) -> str:
    """The file's text from relation lines already in the file's order (source, type, target)."""
    body = ",\n".join(lines)
    head = (
        "{\n"
        f'  "version": "{GRAPH_INDEX_VERSION}",\n'
        f'  "lastUpdated": "{format_timestamp(last_updated)}",\n'
        '  "relations": ['
    )
    return head + ("\n" + body + "\n  ]\n}\n" if body else "]\n}\n")


def render_graph_index(relations: Iterable[RelationRecord], last_updated: datetime) -> str:
    """The file's text: deterministic order, one relation per line (small, readable diffs)."""
    ordered = sorted(relations, key=lambda r: (r.source, r.type.value, r.target))
    return render_graph_index_lines(
        (relation_line(r.source, r.target, r.type.value, r.description, r.confidence) for r in ordered), last_updated
    )


def read_graph_index(path: Path) -> list[RelationRecord] | None:
    """The relations in the file, or None when it is missing or not a valid graph index."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != GRAPH_INDEX_VERSION:
            return None
        return [RelationRecord.from_dict(item) for item in data["relations"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def relation_keys(relations: Iterable[RelationRecord]) -> set[tuple[str, str, str, str | None, float]]:
    return {(r.source, r.target, r.type.value, r.description, r.confidence) for r in relations}


def build_graph(nodes: Iterable[tuple[str, str, str, str]], relations: Iterable[RelationRecord]) -> nx.MultiDiGraph:
    """A MultiDiGraph with a vertex per node (attributes type, status, title) and an edge per relation.

    Relations whose target does not exist still get an edge; the target vertex then has
    ``missing=True`` so callers can report dangling targets.
    """
    import networkx as nx  # imported here: it costs ~0.2 s and only graph operations need it

    graph = nx.MultiDiGraph()
    for node_id, node_type, status, title in nodes:
        graph.add_node(node_id, type=node_type, status=status, title=title, missing=False)
    for r in relations:
        if r.target not in graph:
            graph.add_node(r.target, missing=True)
        if r.source not in graph:
            graph.add_node(r.source, missing=True)
        graph.add_edge(
            r.source, r.target, key=r.type.value, type=r.type.value, description=r.description, confidence=r.confidence
        )
    return graph
