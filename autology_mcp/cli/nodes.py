"""The command-line twins of the seven tools, and ``show``:

    autology capture TITLE [--content TEXT | --content-file FILE] [--type T] [--tag TAG ...] [--reference PATH ...]
    autology query [TEXT ...] [--type T] [--tag TAG ...] [--limit N]
    autology status | show ID | update ID [...] | delete ID
    autology relate SOURCE TYPE TARGET [--description D] [--confidence C] | unrelate SOURCE TYPE TARGET

Each prints text for people, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import sys

from autology_mcp.cli.common import add_command, emit, node_id, open_autology, read_content, require_store
from autology_mcp.common.errors import AutologyError
from autology_mcp.knowledge.models import NODE_STATUSES, NODE_TYPES, RELATION_TYPES


def cmd_capture(args: argparse.Namespace) -> int:
    content = read_content(args.content, args.content_file)
    if content is None:
        print("error: give --content TEXT or --content-file PATH (- for stdin)", file=sys.stderr)
        return 2
    autology = open_autology(args)
    result = autology.capture(
        args.title,
        content,
        type=args.type,
        tags=args.tag or None,
        references=args.reference or None,
        session=args.session,
        source=args.source,
        confidence=args.confidence,
        status=args.status,
    )
    path = autology.store.paths.node_file(result.type, result.id)
    emit(args, result, lambda: f"✓ Captured {result.type} {result.id} (confidence {result.confidence})\n  {path}"
         + "".join(f"\n  Warning: {w}" for w in result.warnings))
    return 0


def _score_bar(score: float) -> str:
    return f"{score:.2f}"


def cmd_query(args: argparse.Namespace) -> int:
    require_store(args, "query")
    from autology_mcp.semantic.nodes import dense_for

    autology = open_autology(args)
    hits = autology.query(" ".join(args.text) or None, type=args.type, tags=args.tag or None, limit=args.limit,
                          max_chars=args.max_chars, dense=dense_for(autology.store.root))

    listing = not " ".join(args.text).strip()  # no text: the most recent nodes, which have no relevance score

    def human() -> str:
        if not hits:
            return "no nodes yet" if listing else "no matching nodes"
        lines = [f"no search text: the {len(hits)} most recently modified nodes"] if listing else []
        for hit in hits:
            node = hit.node
            tags = f"  #{' #'.join(node.tags)}" if node.tags else ""
            status = "" if node.status == "active" else f"  [{node.status}]"
            first = str(node.modified)[:10] if listing else _score_bar(hit.score)
            lines.append(f"{first}  {node.type:<10} {node.title}{status}{tags}\n      {node.id}")
        return "\n".join(lines)

    emit(args, hits, human)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from autology_mcp.retrieval.ledger import status_with_counters

    require_store(args, "status")
    status = status_with_counters(open_autology(args))

    def human() -> str:
        lines = [f"{status.totalNodes} nodes, {status.totalRelations} relations"]
        lines.append("  nodes:     " + (", ".join(f"{k} {v}" for k, v in status.nodesByType.items() if v) or "-"))
        lines.append("  status:    " + (", ".join(f"{k} {v}" for k, v in status.nodesByStatus.items() if v) or "-"))
        lines.append(
            "  relations: " + (", ".join(f"{k} {v}" for k, v in status.relationsByType.items() if v) or "-")
        )
        for item in status.malformedFiles:
            lines.append(f"  ✗ unreadable {item['path']}: {item['reason']}")
        if status.retrieval:  # issue 6: verdict and claim-check counters
            from autology_mcp.retrieval.ledger import summary_lines

            lines += summary_lines(status.retrieval)
        return "\n".join(lines)

    emit(args, status, human)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    require_store(args, "show")
    autology = open_autology(args)
    node = autology.get(node_id(autology.store, args.id))

    def human() -> str:
        from autology_mcp.knowledge.markdown import render_node

        return render_node(autology.store.get(node.id)).rstrip()

    emit(args, node, human)
    return 0


def _with_titles(autology, message: str, *ids: str) -> str:
    """The service's message with each node's title beside its id (a person reads titles)."""
    for nid in ids:
        try:
            title = autology.store.get(nid).title
        except AutologyError:
            continue
        message = message.replace(nid, f"{nid} ({title})", 1)
    return message


def _message(args: argparse.Namespace, message: str) -> None:
    emit(args, {"message": message}, lambda: message)


def cmd_update(args: argparse.Namespace) -> int:
    content = read_content(args.content, args.content_file)
    autology = open_autology(args)
    message = autology.update(
        node_id(autology.store, args.id),
        title=args.title,
        content=content,
        tags=args.tag if args.tag is not None else ([] if args.clear_tags else None),
        status=args.status,
        confidence=args.confidence,
        references=args.reference,
    )
    _message(args, message)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    autology = open_autology(args)
    nid = node_id(autology.store, args.id)
    if not args.yes and sys.stdin.isatty():  # a person at a terminal confirms; scripts and pipes do not block
        node = autology.get(nid)
        answer = input(f"Delete {node.type} {nid[:8]} {node.title!r} and its relations? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("not deleted", file=sys.stderr)
            return 1
    _message(args, autology.delete(nid))
    return 0


def cmd_relate(args: argparse.Namespace) -> int:
    autology = open_autology(args)
    source, target = node_id(autology.store, args.source, "source"), node_id(autology.store, args.target, "target")
    message = autology.relate(source, target, args.type, description=args.description, confidence=args.confidence)
    _message(args, _with_titles(autology, message, source, target))
    return 0


def cmd_unrelate(args: argparse.Namespace) -> int:
    autology = open_autology(args)
    source, target = node_id(autology.store, args.source, "source"), node_id(autology.store, args.target, "target")
    _message(args, _with_titles(autology, autology.unrelate(source, target, args.type), source, target))
    return 0


ID_HELP = "a node id, a unique id prefix of 6+ characters, or the node's exact title"


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the node commands on the top-level subparsers."""
    p = add_command(sub, "capture", cmd_capture, "create a knowledge node")
    p.add_argument("title", help="short title, 1-100 characters")
    p.add_argument("--content", "-c", help="Markdown content")
    p.add_argument("--content-file", "-f", help="read the content from a file (- for stdin)")
    p.add_argument("--type", "-t", choices=NODE_TYPES, help="node type (classified from the text when omitted)")
    p.add_argument("--tag", action="append", help="a tag (repeat for several)")
    p.add_argument("--reference", "-r", action="append", help="a referenced file path, optionally with #L10, #L10-40 or #Symbol.method (repeat for several)")
    p.add_argument("--session", help="session id")
    p.add_argument("--source", default="manual", help="manual (default) or hook_<event>")
    p.add_argument("--confidence", type=float, help="0.5-1.0 (default: 0.9 manual, 0.85 hook, 0.7 classified)")
    p.add_argument("--status", choices=NODE_STATUSES, help="initial status (default active)")

    p = add_command(sub, "query", cmd_query, "search knowledge nodes (no text: most recent first)")
    p.add_argument("text", nargs="*", help="search text")
    p.add_argument("--type", "-t", choices=NODE_TYPES, help="only nodes of this type")
    p.add_argument("--tag", action="append", help="only nodes with this tag (repeat: all must match)")
    p.add_argument("--limit", "-n", type=int, default=10, help="maximum results (1-100, default 10)")
    p.add_argument("--max-chars", type=int, help="characters of node content in all (default 24000; --json output)")

    add_command(sub, "status", cmd_status, "knowledge graph statistics")

    p = add_command(sub, "show", cmd_show, "print one node")
    p.add_argument("id", help=ID_HELP)

    p = add_command(sub, "update", cmd_update, "change some fields of a node")
    p.add_argument("id", help=ID_HELP)
    p.add_argument("--title", help="new title, 1-100 characters")
    p.add_argument("--content", "-c", help="new Markdown content (a decision keeps its ADR sections)")
    p.add_argument("--content-file", "-f", help="read the new content from a file (- for stdin)")
    p.add_argument("--tag", action="append", help="new tags (repeat); replaces the old ones")
    p.add_argument("--clear-tags", action="store_true", help="remove all tags")
    p.add_argument("--status", choices=NODE_STATUSES, help="new status")
    p.add_argument("--confidence", type=float, help="new confidence, 0.5-1.0")
    p.add_argument("--reference", "-r", action="append", help="new references, each a path optionally with #L10-40 or #Symbol (repeat); replaces the old ones")

    p = add_command(sub, "delete", cmd_delete, "delete a node and its relations (asks first on a terminal)")
    p.add_argument("id", help=ID_HELP)
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")

    p = add_command(sub, "relate", cmd_relate, "create or update a relation")
    p.add_argument("source", help="the source node: " + ID_HELP)
    p.add_argument("type", choices=RELATION_TYPES, help="relation type")
    p.add_argument("target", help="the target node: " + ID_HELP)
    p.add_argument("--description", "-d", help="what the relation means here")
    p.add_argument("--confidence", type=float, help="0.0-1.0 (default 0.8)")

    p = add_command(sub, "unrelate", cmd_unrelate, "remove a relation")
    p.add_argument("source", help="the source node: " + ID_HELP)
    p.add_argument("type", choices=RELATION_TYPES, help="relation type")
    p.add_argument("target", help="the target node: " + ID_HELP)
