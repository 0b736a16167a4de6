"""Bringing in what a team already has:

    autology import adr FOLDER [--apply]    architecture decision records (Nygard, adr-tools, MADR)
    autology import memory FILE [--apply]   the official MCP memory server's memory.jsonl
    autology import claude-md PATH [--apply] a CLAUDE.md (with its @-imports) or a memory folder
    autology import basic-memory DIR [--apply] basic-memory notes (observations, relations)

A dry run by default: it prints what would be created, updated or left as it is; ``--apply`` writes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autology_mcp.cli.common import add_command, emit, root_of


def cmd_import_adr(args: argparse.Namespace) -> int:
    from autology_mcp.common.errors import ValidationError
    from autology_mcp.knowledge import import_adr
    from autology_mcp.knowledge.store import NodeStore

    folder = Path(args.folder)
    if not folder.is_dir():
        raise ValidationError("folder", f"{folder} is not a folder of ADR files")
    store = NodeStore(root_of(args))
    try:
        store.init()
        store.reconcile()
        report = import_adr.plan(store, folder)
        if args.apply:
            import_adr.apply(store, report)
    finally:
        store.close()
    data = {
        "applied": bool(args.apply),
        "counts": report.counts(),
        "records": [{"path": str(p.record.path), "title": p.record.title, "action": p.action, "status": p.record.status,
                     "id": p.node_id, "reason": p.reason or None} for p in report.planned],
        "supersedes": [{"newer": a, "older": b} for a, b in report.relations],
    }

    def human() -> str:
        verb = "" if args.apply else "would "
        lines = [f"{'✓ imported' if args.apply else 'dry run:'} {len(report.planned)} ADR file(s) from {folder}: "
                 + ", ".join(f"{n} {verb}{a}" for a, n in sorted(report.counts().items()))]
        lines += [f"  {p.action:9} {p.record.path.name}: {p.record.title} [{p.record.status}]" + (f" ({p.reason})" if p.reason else "")
                  for p in report.planned]
        lines += [f"  supersedes: {a} → {b}" for a, b in report.relations]
        if not args.apply:
            lines.append("Nothing was written; run again with --apply.")
        return "\n".join(lines)

    emit(args, data, human)
    return 0


def cmd_import_memory(args: argparse.Namespace) -> int:
    from autology_mcp.common.errors import ValidationError
    from autology_mcp.knowledge.import_memory import import_memory
    from autology_mcp.knowledge.store import NodeStore

    path = Path(args.file)
    if not path.is_file():
        raise ValidationError("file", f"{path} is not a file (the memory server's memory.jsonl)")
    store = NodeStore(root_of(args))
    try:
        store.init()
        store.reconcile()
        report = import_memory(store, path, args.apply)
    finally:
        store.close()
    data = {
        "applied": bool(args.apply),
        "counts": report.counts(),
        "entities": [{"name": e.name, "entityType": e.entity_type, "action": a, "id": i} for e, a, i in report.entities],
        "relations": [{"from": f, "to": t, "type": k, "relationType": n} for f, t, k, n in report.relations],
        "skipped": report.skipped,
    }

    def human() -> str:
        verb = "" if args.apply else "would "
        lines = [f"{'✓ imported' if args.apply else 'dry run:'} {len(report.entities)} entities, {len(report.relations)}"
                 f" relations from {path}: " + ", ".join(f"{n} {verb}{a}" for a, n in sorted(report.counts().items()))]
        lines += [f"  {a:9} {e.name} ({e.entity_type or 'no type'})" for e, a, _ in report.entities]
        lines += [f"  relation {f} -[{k}]-> {t} (was {n!r})" for f, t, k, n in report.relations]
        lines += [f"  skipped {why}" for why in report.skipped]
        if not args.apply:
            lines.append("Nothing was written; run again with --apply.")
        return "\n".join(lines)

    emit(args, data, human)
    return 0


def cmd_import_claude_md(args: argparse.Namespace) -> int:
    from autology_mcp.common.errors import ValidationError
    from autology_mcp.knowledge.import_claude_md import import_notes
    from autology_mcp.knowledge.store import NodeStore

    path = Path(args.path).expanduser()
    if not path.exists():
        raise ValidationError("path", f"{path} does not exist (give a CLAUDE.md or a folder of memory files)")
    store = NodeStore(root_of(args))
    try:
        store.init()
        store.reconcile()
        report = import_notes(store, path, args.apply)
    finally:
        store.close()
    data = {
        "applied": bool(args.apply),
        "counts": report.counts(),
        "sections": [{"file": str(s.file), "title": s.heading, "type": s.kind, "action": a, "id": i}
                     for s, a, i in report.sections],
        "skipped": report.skipped,
    }

    def human() -> str:
        verb = "" if args.apply else "would "
        lines = [f"{'✓ imported' if args.apply else 'dry run:'} {len(report.sections)} section(s) from {path}: "
                 + ", ".join(f"{n} {verb}{a}" for a, n in sorted(report.counts().items()))]
        lines += [f"  {a:9} {s.kind:10} {s.heading}  ({s.file.name})" for s, a, _ in report.sections]
        lines += [f"  skipped {why}" for why in report.skipped]
        if not args.apply:
            lines.append("Nothing was written; run again with --apply.")
        return "\n".join(lines)

    emit(args, data, human)
    return 0


def cmd_import_basic_memory(args: argparse.Namespace) -> int:
    from autology_mcp.common.errors import ValidationError
    from autology_mcp.knowledge.import_basic_memory import import_notes
    from autology_mcp.knowledge.store import NodeStore

    folder = Path(args.folder).expanduser()
    if not folder.is_dir():
        raise ValidationError("folder", f"{folder} is not a folder of basic-memory notes")
    store = NodeStore(root_of(args))
    try:
        store.init()
        store.reconcile()
        report = import_notes(store, folder, args.apply)
    finally:
        store.close()
    data = {
        "applied": bool(args.apply),
        "counts": report.counts(),
        "notes": [{"path": str(n.path), "title": n.title, "type": n.kind, "action": a, "id": i} for n, a, i in report.notes],
        "relations": [{"from": f, "to": t, "type": k, "name": o} for f, t, k, o in report.relations],
        "skipped": report.skipped,
    }

    def human() -> str:
        verb = "" if args.apply else "would "
        lines = [f"{'✓ imported' if args.apply else 'dry run:'} {len(report.notes)} note(s), {len(report.relations)}"
                 f" relation(s) from {folder}: " + ", ".join(f"{n} {verb}{a}" for a, n in sorted(report.counts().items()))]
        lines += [f"  {a:9} {n.kind:10} {n.title}" for n, a, _ in report.notes]
        lines += [f"  relation {f} -[{k}]-> {t} (was {o!r})" for f, t, k, o in report.relations]
        lines += [f"  skipped {why}" for why in report.skipped]
        if not args.apply:
            lines.append("Nothing was written; run again with --apply.")
        return "\n".join(lines)

    emit(args, data, human)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="bring in what a team already keeps (ADR folders, CLAUDE.md, the memory server's graph, basic-memory)")
    inner = parser.add_subparsers(dest="import_kind", metavar="KIND")
    p = add_command(inner, "adr", cmd_import_adr, "architecture decision records (Nygard, adr-tools, MADR) as decision nodes")
    p.add_argument("folder", help="the folder of ADR files (e.g. docs/adr)")
    p.add_argument("--apply", action="store_true", help="write the nodes (default: a dry run)")
    p = add_command(inner, "memory", cmd_import_memory, "the official MCP memory server's memory.jsonl as nodes and relations")
    p.add_argument("file", help="the memory server's file (memory.jsonl or memory.json)")
    p.add_argument("--apply", action="store_true", help="write the nodes (default: a dry run)")
    p = add_command(inner, "claude-md", cmd_import_claude_md,
                    "a CLAUDE.md (and its @-imports) or a folder of memory files as conventions and concepts")
    p.add_argument("path", help="a CLAUDE.md, or a folder of Markdown memory files")
    p.add_argument("--apply", action="store_true", help="write the nodes (default: a dry run)")
    p = add_command(inner, "basic-memory", cmd_import_basic_memory, "basic-memory notes as nodes and relations")
    p.add_argument("folder", help="a basic-memory project folder (read recursively)")
    p.add_argument("--apply", action="store_true", help="write the nodes (default: a dry run)")
