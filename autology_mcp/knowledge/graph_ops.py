"""Graph operations over the knowledge graph (``NodeStore.graph()``, a NetworkX MultiDiGraph).

- :func:`neighbours`: nodes within ``depth`` relations of a node, optionally only along some
  relation types, following relations in both directions;
- :func:`path`: a shortest chain of relations between two nodes (either direction);
- :func:`impact`: everything that depends on, or is affected by, a node, transitively —
  ``X affects Y`` makes Y affected by X; ``Y uses / depends_on / implements / derived_from X``
  makes Y depend on X;
- :func:`supersession_chain`: the line of ``supersedes`` relations through a node, oldest first.

Results are plain dicts (JSON-ready), ordered deterministically (by distance, then id).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from autology_mcp.common.errors import NotFoundError, ValidationError
from autology_mcp.knowledge.models import validate_id, validate_relation_type

if TYPE_CHECKING:
    import networkx as nx

DEPTH_MAX = 6
# Relations along which change propagates: (relation type, direction from the changed node)
IMPACT_EDGES = (("affects", "out"), ("uses", "in"), ("depends_on", "in"), ("implements", "in"), ("derived_from", "in"))


def _check_node(graph: nx.MultiDiGraph, node_id: Any, field: str = "id") -> str:
    node_id = validate_id(node_id, field)
    if node_id not in graph or graph.nodes[node_id].get("missing"):
        raise NotFoundError(node_id)
    return node_id


def _types(relation_types: Any) -> set[str] | None:
    if relation_types in (None, [], ()):
        return None
    if isinstance(relation_types, str) or not isinstance(relation_types, (list, tuple, set)):
        raise ValidationError("relation_types", "must be a list of relation types")
    return {validate_relation_type(t, "relation_types").value for t in relation_types}


def node_summary(graph: nx.MultiDiGraph, node_id: str) -> dict[str, Any]:
    data = graph.nodes[node_id]
    if data.get("missing"):
        return {"id": node_id, "missing": True}
    return {"id": node_id, "type": data["type"], "title": data["title"], "status": data["status"]}


def _steps(graph: nx.MultiDiGraph, node_id: str, types: set[str] | None) -> list[tuple[str, dict[str, str]]]:
    """(neighbour, edge) for every relation touching ``node_id``, both directions, deterministic order."""
    steps = []
    for _, target, key in graph.out_edges(node_id, keys=True):
        if types is None or key in types:
            steps.append((target, {"source": node_id, "type": key, "target": target}))
    for source, _, key in graph.in_edges(node_id, keys=True):
        if types is None or key in types:
            steps.append((source, {"source": source, "type": key, "target": node_id}))
    return sorted(steps, key=lambda s: (s[0], s[1]["type"], s[1]["source"]))


def neighbours(graph: nx.MultiDiGraph, node_id: Any, depth: Any = 1, relation_types: Any = None) -> dict[str, Any]:
    start = _check_node(graph, node_id)
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= DEPTH_MAX:
        raise ValidationError("depth", f"must be a whole number from 1 to {DEPTH_MAX}, got {depth!r}")
    types = _types(relation_types)
    distance = {start: 0}
    edges: dict[tuple[str, str, str], dict[str, str]] = {}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        if distance[current] == depth:
            continue
        for other, edge in _steps(graph, current, types):
            edges[(edge["source"], edge["type"], edge["target"])] = edge
            if other not in distance:
                distance[other] = distance[current] + 1
                queue.append(other)
    found = sorted((d, n) for n, d in distance.items() if n != start)
    return {
        "node": node_summary(graph, start),
        "depth": depth,
        "relationTypes": sorted(types) if types else None,
        "neighbours": [node_summary(graph, n) | {"distance": d} for d, n in found],
        "relations": [edges[k] for k in sorted(edges)],
    }


def path(graph: nx.MultiDiGraph, source: Any, target: Any, relation_types: Any = None) -> dict[str, Any]:
    """A shortest chain of relations from ``source`` to ``target``, following relations either way."""
    start = _check_node(graph, source, "source")
    goal = _check_node(graph, target, "target")
    types = _types(relation_types)
    previous: dict[str, tuple[str, dict[str, str]] | None] = {start: None}
    queue = deque([start])
    while queue and goal not in previous:
        current = queue.popleft()
        for other, edge in _steps(graph, current, types):
            if other not in previous:
                previous[other] = (current, edge)
                queue.append(other)
    if goal not in previous:
        return {
            "source": node_summary(graph, start),
            "target": node_summary(graph, goal),
            "found": False,
            "length": None,
            "nodes": [],
            "relations": [],
        }
    chain, relations = [goal], []
    while previous[chain[-1]] is not None:
        before, edge = previous[chain[-1]]  # type: ignore[misc]
        relations.append(edge)
        chain.append(before)
    chain.reverse()
    relations.reverse()
    return {
        "source": node_summary(graph, start),
        "target": node_summary(graph, goal),
        "found": True,
        "length": len(relations),
        "nodes": [node_summary(graph, n) for n in chain],
        "relations": relations,
    }


def impact(graph: nx.MultiDiGraph, node_id: Any, depth: Any = DEPTH_MAX) -> dict[str, Any]:
    """Every node that depends on, or is affected by, ``node_id`` (transitively), nearest first."""
    start = _check_node(graph, node_id)
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= DEPTH_MAX:
        raise ValidationError("depth", f"must be a whole number from 1 to {DEPTH_MAX}, got {depth!r}")
    reached: dict[str, tuple[int, dict[str, str]]] = {}
    queue = deque([(start, 0)])
    seen = {start}
    while queue:
        current, dist = queue.popleft()
        if dist == depth:
            continue
        hops = []
        for relation, direction in IMPACT_EDGES:
            if direction == "out":
                hops += [
                    (t, {"source": current, "type": relation, "target": t})
                    for _, t, k in graph.out_edges(current, keys=True)
                    if k == relation
                ]
            else:
                hops += [
                    (s, {"source": s, "type": relation, "target": current})
                    for s, _, k in graph.in_edges(current, keys=True)
                    if k == relation
                ]
        for other, edge in sorted(hops, key=lambda h: (h[0], h[1]["type"])):
            if other not in seen and not graph.nodes[other].get("missing"):
                seen.add(other)
                reached[other] = (dist + 1, edge)
                queue.append((other, dist + 1))
    ordered = sorted(reached.items(), key=lambda item: (item[1][0], item[0]))
    return {
        "node": node_summary(graph, start),
        "impacted": [node_summary(graph, n) | {"distance": d, "via": edge} for n, (d, edge) in ordered],
    }


def supersession_chain(graph: nx.MultiDiGraph, node_id: Any) -> dict[str, Any]:
    """The nodes linked to ``node_id`` by ``supersedes`` relations, oldest first; ``current`` are the newest."""
    start = _check_node(graph, node_id)
    members = {start}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        linked = [t for _, t, k in graph.out_edges(current, keys=True) if k == "supersedes"]
        linked += [s for s, _, k in graph.in_edges(current, keys=True) if k == "supersedes"]
        for other in linked:
            if other not in members and not graph.nodes[other].get("missing"):
                members.add(other)
                queue.append(other)
    # newer -> older edges; order oldest first: a node comes after everything it supersedes
    older = {n: {t for _, t, k in graph.out_edges(n, keys=True) if k == "supersedes" and t in members} for n in members}
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(members):
        ready = (
            sorted(n for n in members - placed if older[n] <= placed) or sorted(members - placed)[:1]
        )  # a cycle: break it
        ordered.extend(ready)
        placed.update(ready)
    superseded_by_someone = {t for n in members for t in older[n]}
    relations = [{"source": n, "type": "supersedes", "target": t} for n in sorted(members) for t in sorted(older[n])]
    return {
        "node": node_summary(graph, start),
        "chain": [node_summary(graph, n) for n in ordered],
        "current": [node_summary(graph, n) for n in ordered if n not in superseded_by_someone],
        "relations": relations,
    }


OPERATIONS = ("neighbours", "path", "impact", "supersession")


def run(
    graph: nx.MultiDiGraph, operation: Any, id: Any, target: Any = None, depth: Any = None, relation_types: Any = None
) -> dict[str, Any]:
    """Dispatch one ``autology_graph`` call."""
    if operation in ("neighbors", "neighbours"):
        return neighbours(graph, id, 1 if depth is None else depth, relation_types)
    if operation == "path":
        if target is None:
            raise ValidationError("target", "is required for operation 'path'")
        return path(graph, id, target, relation_types)
    if operation == "impact":
        return impact(graph, id, DEPTH_MAX if depth is None else depth)
    if operation in ("supersession", "supersession_chain"):
        return supersession_chain(graph, id)
    raise ValidationError("operation", f"unknown operation {operation!r}", OPERATIONS)
