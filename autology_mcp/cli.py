"""The ``autology`` command line: ``serve`` for MCP clients, and human-facing commands that mirror the tools.

Every command accepts ``--root`` (before the command name); the data commands accept ``--json``
for scripts. Errors print ``error: <message>`` on stderr and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import AutologyError
from autology_mcp.knowledge.models import NODE_STATUSES, NODE_TYPES, RELATION_TYPES
from autology_mcp.common.paths import resolve_root


def _root(args: argparse.Namespace) -> Path:
    return resolve_root(getattr(args, "root", None))


def command_group(
    sub: argparse._SubParsersAction, name: str, help: str, description: str
) -> Callable[[str, str, Callable[[argparse.Namespace, Path], int]], argparse.ArgumentParser]:
    """Register ``autology <name> SUBCOMMAND``; returns ``leaf(name, help, func)``, which adds one
    subcommand with ``--json`` and runs ``func(args, root)``. Bare ``autology <name>`` prints help."""
    parser = sub.add_parser(name, help=help, description=description)
    parser.set_defaults(func=lambda args: (parser.print_help(sys.stderr), 2)[1])
    subcommands = parser.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND")

    def leaf(leaf_name: str, leaf_help: str, func: Callable[[argparse.Namespace, Path], int]) -> argparse.ArgumentParser:
        p = subcommands.add_parser(leaf_name, help=leaf_help, description=leaf_help)
        p.add_argument("--json", action="store_true", help="machine-readable JSON output")
        p.set_defaults(func=lambda args: func(args, _root(args)))  # errors: main() prints them, exit 1
        return p

    return leaf


def _open(args: argparse.Namespace):
    from autology_mcp.knowledge.service import Autology

    return Autology.open(_root(args))


def _emit(args: argparse.Namespace, data: Any, human: Callable[[], str]) -> None:
    if getattr(args, "json", False):
        if hasattr(data, "model_dump"):
            data = data.model_dump(mode="json")
        elif isinstance(data, list):
            data = [d.model_dump(mode="json") if hasattr(d, "model_dump") else d for d in data]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(human())


def _text(value: str | None, args_file: str | None) -> str | None:
    """Content from --content, or from a file (``-`` reads stdin)."""
    if args_file is None:
        return value
    if args_file == "-":
        return sys.stdin.read()
    return Path(args_file).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ commands


def cmd_serve(args: argparse.Namespace) -> int:
    from autology_mcp.server.app import serve

    serve(_root(args), watch=not args.no_watch)
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(_root(args))
    created = store.init()
    report = store.reconcile()
    store.close()
    if created:
        for path in created:
            print(f"created {path}")
    print(f"✓ autology store ready at {store.paths.base} ({report.scanned} node files)")
    return 0


def cmd_capture(args: argparse.Namespace) -> int:
    content = _text(args.content, args.content_file)
    if content is None:
        print("error: give --content TEXT or --content-file PATH (- for stdin)", file=sys.stderr)
        return 2
    autology = _open(args)
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
    _emit(args, result, lambda: f"✓ Captured {result.type} {result.id} (confidence {result.confidence})\n  {path}")
    return 0


def _score_bar(score: float) -> str:
    return f"{score:.2f}"


def cmd_query(args: argparse.Namespace) -> int:
    hits = _open(args).query(" ".join(args.text) or None, type=args.type, tags=args.tag or None, limit=args.limit)

    def human() -> str:
        if not hits:
            return "no matching nodes"
        lines = []
        for hit in hits:
            node = hit.node
            tags = f"  #{' #'.join(node.tags)}" if node.tags else ""
            status = "" if node.status == "active" else f"  [{node.status}]"
            lines.append(f"{_score_bar(hit.score)}  {node.type:<10} {node.title}{status}{tags}\n      {node.id}")
        return "\n".join(lines)

    _emit(args, hits, human)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from autology_mcp.retrieval.ledger import status_with_counters

    status = status_with_counters(_open(args))

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

    _emit(args, status, human)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    autology = _open(args)
    node = autology.get(args.id)

    def human() -> str:
        from autology_mcp.knowledge.markdown import render_node

        return render_node(autology.store.get(node.id)).rstrip()

    _emit(args, node, human)
    return 0


def _message(args: argparse.Namespace, message: str) -> None:
    _emit(args, {"message": message}, lambda: message)


def cmd_update(args: argparse.Namespace) -> int:
    content = _text(args.content, args.content_file)
    message = _open(args).update(
        args.id,
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
    _message(args, _open(args).delete(args.id))
    return 0


def cmd_relate(args: argparse.Namespace) -> int:
    message = _open(args).relate(
        args.source, args.target, args.type, description=args.description, confidence=args.confidence
    )
    _message(args, message)
    return 0


def cmd_unrelate(args: argparse.Namespace) -> int:
    _message(args, _open(args).unrelate(args.source, args.target, args.type))
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    import time

    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(_root(args))
    started = time.perf_counter()
    report = store.rebuild()
    elapsed = time.perf_counter() - started
    data = {
        "files": report.scanned,
        "nodes": store.index.count(),
        "malformed": [{"path": p, "reason": r} for p, r in report.malformed],
        "seconds": round(elapsed, 3),
    }

    def human() -> str:
        lines = [f"✓ rebuilt the derived indexes from {report.scanned} files in {elapsed:.2f} s ({data['nodes']} nodes)"]
        lines += [f"  ✗ skipped {p}: {r}" for p, r in report.malformed]
        return "\n".join(lines)

    _emit(args, data, human)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.doctor import diagnose, render
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(_root(args))
    report = diagnose(store)
    _emit(args, report.to_dict(), lambda: render(report, store.root))
    return 0 if report.ok else 1


# ------------------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autology",
        description="Project memory for coding agents: a Markdown knowledge graph in .autology/, served over MCP.",
    )
    parser.add_argument(
        "--root", help="project root (default: $AUTOLOGY_ROOT, then $CLAUDE_PROJECT_DIR, then the git top level, then cwd)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, func: Callable[[argparse.Namespace], int], help: str, json_flag: bool = True):
        p = sub.add_parser(name, help=help, description=help)
        if json_flag:
            p.add_argument("--json", action="store_true", help="machine-readable JSON output")
        p.set_defaults(func=func)
        return p

    p = command("serve", cmd_serve, "run the MCP server on stdio", json_flag=False)
    p.add_argument("--no-watch", action="store_true", help="do not watch node files for outside changes")
    command("init", cmd_init, "create .autology/ (nodes folders, .gitignore for derived data)", json_flag=False)

    p = command("capture", cmd_capture, "create a knowledge node")
    p.add_argument("title")
    p.add_argument("--content", "-c", help="Markdown content")
    p.add_argument("--content-file", "-f", help="read the content from a file (- for stdin)")
    p.add_argument("--type", "-t", choices=NODE_TYPES, help="node type (classified from the text when omitted)")
    p.add_argument("--tag", action="append", help="a tag (repeat for several)")
    p.add_argument("--reference", "-r", action="append", help="a referenced file path (repeat for several)")
    p.add_argument("--session", help="session id")
    p.add_argument("--source", default="manual", help="manual (default) or hook_<event>")
    p.add_argument("--confidence", type=float, help="0.5-1.0 (default: 0.9 manual, 0.85 hook, 0.7 classified)")
    p.add_argument("--status", choices=NODE_STATUSES, help="initial status (default active)")

    p = command("query", cmd_query, "search knowledge nodes (no text: most recent first)")
    p.add_argument("text", nargs="*", help="search text")
    p.add_argument("--type", "-t", choices=NODE_TYPES)
    p.add_argument("--tag", action="append", help="only nodes with this tag (repeat: all must match)")
    p.add_argument("--limit", "-n", type=int, default=10, help="maximum results (1-100, default 10)")

    command("status", cmd_status, "knowledge graph statistics")

    p = command("show", cmd_show, "print one node")
    p.add_argument("id")

    p = command("update", cmd_update, "change some fields of a node")
    p.add_argument("id")
    p.add_argument("--title")
    p.add_argument("--content", "-c")
    p.add_argument("--content-file", "-f")
    p.add_argument("--tag", action="append", help="new tags (repeat); replaces the old ones")
    p.add_argument("--clear-tags", action="store_true", help="remove all tags")
    p.add_argument("--status", choices=NODE_STATUSES)
    p.add_argument("--confidence", type=float)
    p.add_argument("--reference", "-r", action="append", help="new references (repeat); replaces the old ones")

    p = command("delete", cmd_delete, "delete a node and its relations")
    p.add_argument("id")

    p = command("relate", cmd_relate, "create or update a relation")
    p.add_argument("source")
    p.add_argument("type", choices=RELATION_TYPES)
    p.add_argument("target")
    p.add_argument("--description", "-d")
    p.add_argument("--confidence", type=float)

    p = command("unrelate", cmd_unrelate, "remove a relation")
    p.add_argument("source")
    p.add_argument("type", choices=RELATION_TYPES)
    p.add_argument("target")

    command("rebuild", cmd_rebuild, "rebuild every derived index from the node files")
    command("doctor", cmd_doctor, "report malformed files, duplicate ids, dangling relations, a stale graph index")

    from autology_mcp.code.cli import add_commands as add_index_commands

    add_index_commands(sub)
    from autology_mcp.hooks import add_commands as add_hook_commands  # Claude Code hooks (issue 4)

    add_hook_commands(sub)
    from autology_mcp.graph_cli import add_commands as add_graph_commands  # autology graph …, autology analyze (issue 4)

    add_graph_commands(sub)
    from autology_mcp.retrieval.claims_tool import add_command as add_claims_command  # autology check-claims (issue 6)

    add_claims_command(sub)
    from autology_mcp.retrieval.cli import add_commands as add_retrieval_commands  # autology search, context (issue 6)

    add_retrieval_commands(sub)
    from autology_mcp.sessions.cli import add_commands as add_session_commands  # autology sessions … (issue 5)

    add_session_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv)[:1] == ["hook"]:  # issue 4: hooks skip the CLI's imports (<300 ms)
        from autology_mcp.hooks.__main__ import main as hook_main

        return hook_main((sys.argv[1:] if argv is None else argv)[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except AutologyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
