"""The command-line twins of ``autology_graph`` and ``autology_analyze``, and the graph export.

    autology graph export --format mermaid|dot|graphml|json|html [-o FILE]
    autology graph neighbours ID [--depth K] [--type RELATION ...]
    autology graph path SOURCE TARGET [--type RELATION ...]
    autology graph impact ID [--depth K]
    autology graph supersession ID
    autology analyze [CATEGORY ...]

Each prints text for people, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autology_mcp.cli.common import node_id, require_store
from autology_mcp.knowledge.models import RELATION_TYPES


@contextmanager
def _store(args: argparse.Namespace):
    from autology_mcp.common.paths import resolve_root
    from autology_mcp.knowledge.store import NodeStore

    # read-only: in a folder without a store, say so and create nothing
    require_store(args, f"graph {args.graph_command}" if getattr(args, "graph_command", None) else "analyze")
    store = NodeStore(resolve_root(getattr(args, "root", None)))
    try:
        store.refresh()
        yield store
    finally:
        store.close()


def _print(args: argparse.Namespace, data: dict[str, Any], human: Callable[[], str]) -> int:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else human())
    return 0


def _line(node: dict[str, Any], extra: str = "") -> str:
    if node.get("missing"):
        return f"  (missing) {node['id']}{extra}"
    status = "" if node["status"] == "active" else f" [{node['status']}]"
    return f"  {node['type']:<10} {node['title']}{status}  {node['id']}{extra}"


def cmd_export(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.export import export

    with _store(args) as store:
        text = export(store, args.format)
    if args.output and args.output != "-":
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"✓ wrote {args.output} ({args.format})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _render_neighbours(data: dict[str, Any]) -> str:
    head = f"{data['node']['title']}: {len(data['neighbours'])} node(s) within {data['depth']}"
    return "\n".join([head] + [_line(n, f"  (distance {n['distance']})") for n in data["neighbours"]])


def _render_path(data: dict[str, Any]) -> str:
    if not data["found"]:
        return "no path"
    lines = [_line(data["nodes"][0])]
    for relation, before, after in zip(data["relations"], data["nodes"], data["nodes"][1:], strict=False):
        arrow = "→" if relation["source"] == before["id"] else "←"
        lines += [f"    —[{relation['type']}]{arrow}", _line(after)]
    return "\n".join(lines)


def _render_impact(data: dict[str, Any]) -> str:
    head = f"{data['node']['title']}: {len(data['impacted'])} node(s) depend on it or are affected by it"
    rows = [_line(n, f"  (via {n['via']['type']}, distance {n['distance']})") for n in data["impacted"]]
    return "\n".join([head] + rows)


def _render_chain(data: dict[str, Any]) -> str:
    return "\n".join(["oldest first:"] + [_line(n) for n in data["chain"]])


def cmd_walk(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge import graph_ops

    with _store(args) as store:
        graph = store.graph()
        operation = args.graph_command
        args.id = node_id(store, args.id)
        if getattr(args, "target", None):
            args.target = node_id(store, args.target, "target")
        if operation == "neighbours":
            data, render = graph_ops.neighbours(graph, args.id, args.depth, args.type), _render_neighbours
        elif operation == "path":
            data, render = graph_ops.path(graph, args.id, args.target, args.type), _render_path
        elif operation == "impact":
            data, render = graph_ops.impact(graph, args.id, args.depth), _render_impact
        else:
            data, render = graph_ops.supersession_chain(graph, args.id), _render_chain
    return _print(args, data, lambda: render(data))


def cmd_analyze(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.analyze import render
    from autology_mcp.sessions.capture import health_report

    require_store(args, "analyze")
    if args.mark_reviewed:
        from autology_mcp.knowledge.service import Autology

        with _store(args) as store:
            said = [Autology(store).mark_reviewed(i) for i in args.mark_reviewed]
        return _print(args, {"reviewed": args.mark_reviewed}, lambda: "\n".join(said))
    if args.record_fingerprints:
        from autology_mcp.knowledge.service import Autology

        with _store(args) as store:
            said = Autology(store).record_fingerprints()
        return _print(args, {"result": said}, lambda: said)
    with _store(args) as store:
        report = health_report(store, args.category or None)
    return _print(args, report, lambda: render(report))


def add_commands(sub: argparse._SubParsersAction) -> None:
    graph = sub.add_parser("graph", help="walk or export the knowledge graph", description="Whole-graph commands.")
    graph_sub = graph.add_subparsers(dest="graph_command", metavar="SUBCOMMAND", required=True)

    p = graph_sub.add_parser(
        "export",
        help="export the graph as mermaid, dot, graphml, json or a self-contained html page",
        description="Export every node and relation. html is one self-contained page (no network needed to view it).",
    )
    p.add_argument("--format", "-f", choices=("mermaid", "dot", "graphml", "json", "html"), default="json",
                   help="json (default), mermaid, dot (Graphviz), graphml (yEd, Gephi) or html (a page to open in a browser)")
    p.add_argument("--output", "-o", help="file to write (default: stdout)")
    p.set_defaults(func=cmd_export)

    def walk(name: str, help: str, target: bool = False, depth: int | None = None, types: bool = False) -> None:
        p = graph_sub.add_parser(name, help=help, description=help)
        p.add_argument("id", help="node id")
        if target:
            p.add_argument("target", help="target node id")
        if depth is not None:
            p.add_argument("--depth", "-k", type=int, default=depth, help=f"1-6 (default {depth})")
        if types:
            p.add_argument(
                "--type", "-t", action="append", choices=RELATION_TYPES, help="only this relation type (repeat)"
            )
        p.add_argument("--json", action="store_true", help="machine-readable JSON output")
        p.set_defaults(func=cmd_walk)

    walk("neighbours", "nodes within K relations of a node (both directions)", depth=1, types=True)
    walk("path", "the shortest chain of relations between two nodes", target=True, types=True)
    walk("impact", "everything that depends on, or is affected by, a node", depth=6)
    walk("supersession", "the supersedes chain through a node, oldest first")

    p = sub.add_parser(
        "analyze",
        help="health report of the knowledge graph",
        description="Health report by category, each scored 0-100.",
    )
    p.add_argument("category", nargs="*", help="structure, review, adr, references, consistency, insights (default: all)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.add_argument("--mark-reviewed", metavar="ID", action="append", default=[],
                   help="you read this node against the code as it is now and it holds: its references are judged "
                        "from the code as it is now (repeat for more; commit the node's file to share it). Relating, "
                        "tagging or a status change do not do this")
    p.add_argument("--record-fingerprints", action="store_true",
                   help="nodes written before fingerprints existed (or edited by hand since) record the code they "
                        "were written against, at the commit that last changed their file, so a rebase or a "
                        "squash-merge keeps their flags (commit the node files to share it)")
    p.set_defaults(func=cmd_analyze)
