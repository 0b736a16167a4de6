"""Health analysis of the knowledge graph (``autology_analyze``), by category, each with a score.

| category    | finds                                                                        |
|-------------|------------------------------------------------------------------------------|
| structure   | orphans (nodes with no relation at all), relations to nodes that do not exist |
| review      | nodes with status needs_review; superseded nodes still relied on by others   |
| adr         | decisions missing ADR sections (Context, Decision, Alternatives, Consequences) |
| references  | referenced files that are missing, or changed since the node was modified   |
| consistency | duplicate-title candidates; cycles in depends_on                            |

A category's score is ``100 × (1 − nodes with a finding / nodes it looks at)``, rounded; the
overall score is the mean of the categories. Other parts add categories of their own through
``extra`` (session memory adds ``insights``: :func:`autology_mcp.sessions.capture.health_report`). "Changed since" uses the file's last git commit time (its modification time when the file
has uncommitted changes or is not in git).
"""

from __future__ import annotations

import re
import subprocess
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
GIT_TIMEOUT = 10.0
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


def review(nodes: dict[str, KnowledgeNode], relations: list[Any]) -> dict[str, Any]:
    findings, affected = [], set()
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


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args], cwd=root, capture_output=True, text=True, timeout=GIT_TIMEOUT
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _self_and_parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def last_changed(root: Path, paths: list[str]) -> dict[str, float]:
    """When each path (file or folder) last changed: last commit time, or mtime when dirty / not in git."""
    times: dict[str, float] = {}
    if not paths:
        return times
    wanted = set(paths)
    in_git = _git(root, "rev-parse", "--show-prefix")
    dirty: set[str] = set()
    if in_git is not None:
        prefix = in_git.strip()
        log = (
            _git(
                root,
                "log",
                "--max-count=5000",
                "--no-renames",
                "--format=%x00%ct",
                "--name-only",
                "--relative",
                "--",
                *paths,
            )
            or ""
        )
        when = 0.0
        for line in log.splitlines():
            if line.startswith("\x00"):
                when = float(line[1:] or 0)
            elif line.strip():
                for p in _self_and_parents(line.strip()):
                    if p in wanted and p not in times:
                        times[p] = when
        status = _git(root, "status", "--porcelain", "--no-renames", "--", *paths) or ""
        for line in status.splitlines():
            name = line[3:].strip().strip('"')
            dirty.add(name[len(prefix) :] if prefix and name.startswith(prefix) else name)
    dirty_paths = {p for d in dirty for p in _self_and_parents(d)}
    for p in paths:
        if p not in times or p in dirty_paths:
            try:
                times[p] = (root / p).stat().st_mtime
            except OSError:
                continue
    return times


def references(root: Path, nodes: dict[str, KnowledgeNode], node_paths: dict[str, str]) -> dict[str, Any]:
    """``node_paths``: node id -> its file, relative to the root. A node counts as modified when its
    ``modified`` time says so or when its file was last committed, whichever is later (so a node
    committed together with the code it describes is not stale)."""
    live = [n for n in nodes.values() if n.status.value != "superseded" and n.references]
    paths = sorted({reference_path(r) for n in live for r in n.references if reference_path(r)})
    existing = [p for p in paths if (root / p).exists()]
    own_files = sorted({node_paths[n.id] for n in live if n.id in node_paths})
    changed_at = last_changed(root, existing + [p for p in own_files if p not in existing])
    findings, affected = [], set()
    for node in live:
        for ref in node.references:
            p = reference_path(ref)
            if not p:
                continue
            if not (root / p).exists():
                findings.append(_finding("missing_file", node, f"references {ref}, which does not exist"))
                affected.add(node.id)
            elif changed_at.get(p, 0.0) > max(
                node.modified.timestamp(), changed_at.get(node_paths.get(node.id, ""), 0.0)
            ):
                findings.append(
                    _finding("changed_since_modified", node, f"{p} changed after the node was last modified")
                )
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
        "review": lambda: review(nodes, relations),
        "adr": lambda: adr(nodes),
        "references": lambda: references(
            store.root, nodes, {i: p for i, _t, _s, _ti, p in store.index.node_summaries()}
        ),
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
