"""Health analysis of the knowledge graph (``autology_analyze``), by category, each with a score.

| category    | finds                                                                        |
|-------------|------------------------------------------------------------------------------|
| structure   | orphans (nodes with no relation at all), relations to nodes that do not exist |
| review      | nodes with status needs_review; superseded nodes still relied on by others; nodes whose text addresses the agent with instructions, not reviewed (the hooks hold them back) |
| adr         | decisions missing ADR sections (Context, Decision, Alternatives, Consequences) |
| references  | referenced files that are missing, or whose code moved on since the node was reviewed |
| consistency | duplicate-title candidates; cycles in depends_on                            |

A category's score is ``100 × (1 − nodes with a finding / nodes it looks at)``, rounded; the
overall score is the mean of the categories. Other parts add categories of their own through
``extra`` (session memory adds ``insights``: :func:`autology_mcp.sessions.capture.health_report`).
"Moved on" is :mod:`autology_mcp.knowledge.trust.staleness`'s rule, decided from git history and the
working tree: a later commit alone is not a finding.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from autology_mcp.knowledge.adr import missing_adr_sections
from autology_mcp.knowledge.models import KnowledgeNode
from autology_mcp.knowledge.references import reference_path
from autology_mcp.knowledge.store import NodeStore

CATEGORIES = ("structure", "review", "adr", "references", "consistency")
FINDINGS_MAX = 50  # per category; the count is always complete
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TITLE_STOP = frozenset("a an and for in of on or the to with".split())


def _finding(kind: str, node: KnowledgeNode | None, detail: str, node_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "id": node.id if node else node_id, "detail": detail}
    if node is not None:
        out["title"] = node.title
        out["type"] = node.type.value
    return out


def make_category(findings: list[dict[str, Any]], considered: int, affected: set[str]) -> dict[str, Any]:
    score = 100 if considered == 0 else max(0, round(100 * (1 - len(affected) / considered)))
    return {
        "score": score,
        "considered": considered,
        "count": len(findings),
        "findings": findings[:FINDINGS_MAX],
        "truncated": len(findings) > FINDINGS_MAX,
    }


# ------------------------------------------------------------------------------ categories


def structure(nodes: dict[str, KnowledgeNode], relations: list[Any]) -> dict[str, Any]:
    linked: set[str] = set()
    findings, affected = [], set()
    for r in relations:
        linked.update((r.source, r.target))
        if r.target not in nodes and r.source in nodes:
            findings.append(
                _finding("dangling_target", nodes[r.source], f"{r.type.value} → {r.target}, which does not exist")
            )
            affected.add(r.source)
    for node_id, node in nodes.items():
        if node_id not in linked:
            findings.append(_finding("orphan", node, "no relation to or from any other node"))
            affected.add(node_id)
    return make_category(findings, len(nodes), affected)


def review(nodes: dict[str, KnowledgeNode], relations: list[Any], base: Path | None = None) -> dict[str, Any]:
    findings, affected = [], set()
    if base is not None:  # text that addresses the agent (:mod:`autology_mcp.knowledge.trust.untrusted`)
        from autology_mcp.knowledge.trust.untrusted import flagged_nodes

        for node, flags, reviewed in flagged_nodes(base, nodes.values()):
            if not reviewed:
                said = "; ".join(f.text() for f in flags)
                findings.append(_finding("instructions", node, f"its text addresses the agent with instructions ({said}); "
                                         "the hooks hold it back until a person reviews it"))
                affected.add(node.id)
    for node in nodes.values():
        if node.status.value == "needs_review":
            findings.append(_finding("needs_review", node, "marked needs_review"))
            affected.add(node.id)
    users: dict[str, list[str]] = defaultdict(list)
    for r in relations:
        source = nodes.get(r.source)
        if r.type.value != "supersedes" and source is not None and source.status.value != "superseded":
            users[r.target].append(f"{r.source} ({r.type.value})")
    for node in nodes.values():
        if node.status.value == "superseded" and users.get(node.id):
            shown = ", ".join(sorted(users[node.id])[:5])
            findings.append(
                _finding("superseded_still_referenced", node, f"superseded, but still related from {shown}")
            )
            affected.add(node.id)
    return make_category(findings, len(nodes), affected)


def adr(nodes: dict[str, KnowledgeNode]) -> dict[str, Any]:
    decisions = [n for n in nodes.values() if n.type.value == "decision" and n.status.value != "superseded"]
    findings = []
    for node in decisions:
        missing = missing_adr_sections(node.content)
        if missing:
            findings.append(_finding("adr_incomplete", node, f"missing ADR section(s): {', '.join(missing)}"))
    return make_category(findings, len(decisions), {f["id"] for f in findings})


def references(store: NodeStore, nodes: dict[str, KnowledgeNode]) -> dict[str, Any]:
    """Referenced files that are missing, and references the code has moved on from
    (:mod:`autology_mcp.knowledge.trust.staleness`: a mentioned name gone, the lines or symbol changed, the
    file mostly rewritten), each with what changed; later commits that changed none of that are not
    findings."""
    from autology_mcp.knowledge.trust.staleness import judge

    root = store.root
    live = [n for n in nodes.values() if n.status.value != "superseded" and n.references]
    judged = judge(root, store, live)
    findings, affected = [], set()
    for node in live:
        said = {f.reference: f for f in judged.get(node.id, [])}
        for ref in node.references:
            p = reference_path(ref)
            if not p:
                continue
            f = said.get(ref)
            if not (root / p).exists():
                detail = f"references {ref}, which does not exist" + (f": {f.why}" if f is not None and f.why else "")
                findings.append(_finding("missing_file", node, detail))
                affected.add(node.id)
            elif f is not None and f.stale:
                findings.append(_finding("stale", node, f"{ref}: {f.why}"))
                affected.add(node.id)
    return make_category(findings, len(live), affected)


def _title_key(title: str) -> tuple[str, ...]:
    words = [w.lower() for w in _WORD.findall(title)]
    return tuple(sorted({w for w in words if w not in _TITLE_STOP} or set(words)))


def consistency(nodes: dict[str, KnowledgeNode], relations: list[Any]) -> dict[str, Any]:
    import networkx as nx

    findings, affected = [], set()
    groups: dict[tuple[str, tuple[str, ...]], list[KnowledgeNode]] = defaultdict(list)
    for node in nodes.values():
        if node.status.value != "superseded":
            groups[(node.type.value, _title_key(node.title))].append(node)
    for (_, key), members in sorted(groups.items()):
        if len(members) > 1 and key:
            members.sort(key=lambda n: n.id)
            others = ", ".join(m.id for m in members[1:])
            findings.append(_finding("duplicate_title", members[0], f"same title words as {others}"))
            affected.update(m.id for m in members)
    depends = nx.DiGraph()
    depends.add_edges_from((r.source, r.target) for r in relations if r.type.value == "depends_on")
    for component in sorted(
        (sorted(c) for c in nx.strongly_connected_components(depends) if len(c) > 1), key=lambda c: c[0]
    ):
        cycle = [edge[0] for edge in nx.find_cycle(depends.subgraph(component), source=component[0])]
        first = nodes.get(cycle[0])
        findings.append(
            _finding("depends_on_cycle", first, "depends_on cycle: " + " → ".join(cycle + [cycle[0]]), node_id=cycle[0])
        )
        affected.update(component)
    return make_category(findings, len(nodes), affected & set(nodes))


# ------------------------------------------------------------------------------ the report


def analyze(
    store: NodeStore, categories: Any = None, extra: Mapping[str, Callable[[NodeStore], dict[str, Any]]] | None = None
) -> dict[str, Any]:
    """The health report; ``categories`` limits it to some of :data:`CATEGORIES` and the names of
    ``extra``, which maps further categories to the function that computes each from the store."""
    from autology_mcp.common.errors import ValidationError

    extra = dict(extra or {})
    known = (*CATEGORIES, *extra)
    wanted = list(known) if not categories else list(dict.fromkeys(categories))
    unknown = [c for c in wanted if c not in known]
    if unknown or isinstance(categories, str):
        raise ValidationError("categories", f"unknown category {unknown[0] if unknown else categories!r}", known)
    nodes = {n.id: n for n in store.index.all_nodes()}
    relations = store.index.relations()
    build = {
        "structure": lambda: structure(nodes, relations),
        "review": lambda: review(nodes, relations, store.paths.base),
        "adr": lambda: adr(nodes),
        "references": lambda: references(store, nodes),
        "consistency": lambda: consistency(nodes, relations),
    } | {name: (lambda compute=compute: compute(store)) for name, compute in extra.items()}
    report = {name: build[name]() for name in wanted}
    overall = round(sum(c["score"] for c in report.values()) / len(report))
    return {
        "score": overall,
        "totalNodes": len(nodes),
        "totalRelations": len(relations),
        "categories": report,
    }


def render(report: dict[str, Any]) -> str:
    """The report as text for people (the CLI)."""
    lines = [f"health {report['score']}/100 — {report['totalNodes']} nodes, {report['totalRelations']} relations"]
    for name, category in report["categories"].items():
        lines.append(f"  {name:<12} {category['score']:>3}/100  {category['count']} finding(s)")
        for f in category["findings"]:
            title = f" {f['title']!r}" if f.get("title") else ""
            where = f["id"] or (f"session {f['session']} turn {f['turn']}" if "session" in f else "-")
            lines.append(f"      [{f['kind']}] {where}{title}: {f['detail']}")
        if category["truncated"]:
            lines.append(f"      … {category['count'] - len(category['findings'])} more")
    return "\n".join(lines)
