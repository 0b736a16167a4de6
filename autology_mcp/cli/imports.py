"""Bringing in what a team already has:

    autology import adr FOLDER [--apply]        architecture decision records (Nygard, adr-tools, MADR)
    autology import claude-md PATH [--apply]    a CLAUDE.md (with its @-imports) or a memory folder
    autology import memory FILE [--apply]       the official MCP memory server's memory.jsonl
    autology import basic-memory DIR [--apply]  basic-memory notes (observations, relations)

A dry run by default: it prints what would be created, updated or left as it is; ``--apply`` writes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autology_mcp.cli.common import add_command, emit, root_of


def _with_store(args: argparse.Namespace, work: Callable[[Any], Any]) -> Any:
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root_of(args))
    try:
        store.init()
        store.reconcile()
        return work(store)
    finally:
        store.close()


def _source(args: argparse.Namespace, attr: str, folder: bool, what: str) -> Path:
    from autology_mcp.common.errors import ValidationError

    path = Path(getattr(args, attr)).expanduser()
    if not (path.is_dir() if folder else path.exists()):
        raise ValidationError(attr, f"{path} is not {what}")
    return path


def _emit(args: argparse.Namespace, data: dict, source: Path, what: str, rows: list[str], skipped: list[str]) -> int:
    data = {"applied": bool(args.apply), **data, "skipped": skipped}

    def human() -> str:
        verb = "" if args.apply else "would "
        lines = [f"{'✓ imported' if args.apply else 'dry run:'} {what} from {source}: "
                 + ", ".join(f"{n} {verb}{a}" for a, n in sorted(data["counts"].items()))]
        lines += rows + [f"  skipped {why}" for why in skipped]
        if not args.apply:
            lines.append("Nothing was written; run again with --apply.")
        return "\n".join(lines)

    emit(args, data, human)
    return 0


def cmd_import_adr(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.importers import adr as import_adr

    folder = _source(args, "folder", True, "a folder of ADR files")

    def work(store: Any) -> Any:
        report = import_adr.plan(store, folder)
        return import_adr.apply(store, report) if args.apply else report

    report = _with_store(args, work)
    records = [p for p in report.planned if p.action != "skip"]
    data = {
        "counts": report.counts(),
        "records": [{"path": str(p.record.path), "title": p.record.title, "action": p.action, "status": p.record.status,
                     "id": p.node_id} for p in records],
        "supersedes": [{"newer": a, "older": b} for a, b in report.relations],
        "cites": [{"from": a, "to": b} for a, b in report.citations],
    }
    rows = [f"  {p.action:9} {p.record.path.name}: {p.record.title} [{p.record.status}]" for p in records]
    rows += [f"  supersedes: {a} → {b}" for a, b in report.relations]
    rows += [f"  cites:      {a} → {b}" for a, b in report.citations]
    skipped = [f"{p.record.path.name}: {p.reason}" for p in report.planned if p.action == "skip"]
    return _emit(args, data, folder, f"{len(report.planned)} ADR file(s)", rows, skipped)


def cmd_import_claude_md(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.importers.claude_md import import_notes

    path = _source(args, "path", False, "a CLAUDE.md or a folder of memory files")
    report = _with_store(args, lambda store: import_notes(store, path, args.apply))
    data = {
        "counts": report.counts(),
        "sections": [{"file": str(s.file), "title": s.heading, "type": s.kind, "action": a, "id": i}
                     for s, a, i in report.sections],
    }
    rows = [f"  {a:9} {s.kind:10} {s.heading}  ({s.file.name})" for s, a, _ in report.sections]
    return _emit(args, data, path, f"{len(report.sections)} section(s)", rows, report.skipped)


def cmd_import_memory(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.importers.memory import import_memory

    path = _source(args, "file", False, "the memory server's memory.jsonl")
    report = _with_store(args, lambda store: import_memory(store, path, args.apply))
    data = {
        "counts": report.counts(),
        "entities": [{"name": e.name, "entityType": e.entity_type, "action": a, "id": i} for e, a, i in report.entities],
        "relations": [{"from": f, "to": t, "type": k, "relationType": n} for f, t, k, n in report.relations],
    }
    rows = [f"  {a:9} {e.name} ({e.entity_type or 'no type'})" for e, a, _ in report.entities]
    rows += [f"  relation {f} -[{k}]-> {t} (was {n!r})" for f, t, k, n in report.relations]
    what = f"{len(report.entities)} entities, {len(report.relations)} relations"
    return _emit(args, data, path, what, rows, report.skipped)


def cmd_import_basic_memory(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.importers.basic_memory import import_notes

    folder = _source(args, "folder", True, "a folder of basic-memory notes")
    report = _with_store(args, lambda store: import_notes(store, folder, args.apply))
    data = {
        "counts": report.counts(),
        "notes": [{"path": str(n.path), "title": n.title, "type": n.kind, "action": a, "id": i} for n, a, i in report.notes],
        "relations": [{"from": f, "to": t, "type": k, "name": o} for f, t, k, o in report.relations],
    }
    rows = [f"  {a:9} {n.kind:10} {n.title}" for n, a, _ in report.notes]
    rows += [f"  relation {f} -[{k}]-> {t} (was {o!r})" for f, t, k, o in report.relations]
    what = f"{len(report.notes)} note(s), {len(report.relations)} relation(s)"
    return _emit(args, data, folder, what, rows, report.skipped)


def add_commands(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="bring in what a team already keeps (ADR folders, CLAUDE.md, the memory"
                            " server's graph, basic-memory)")
    inner = parser.add_subparsers(dest="import_kind", metavar="KIND")
    for name, func, arg, arg_help, help_ in (
        ("adr", cmd_import_adr, "folder", "the folder of ADR files (e.g. docs/adr)",
         "architecture decision records (Nygard, adr-tools, MADR) as decision nodes"),
        ("claude-md", cmd_import_claude_md, "path", "a CLAUDE.md, or a folder of Markdown memory files",
         "a CLAUDE.md (and its @-imports) or a folder of memory files as conventions and concepts"),
        ("memory", cmd_import_memory, "file", "the memory server's file (memory.jsonl or memory.json)",
         "the official MCP memory server's memory.jsonl as nodes and relations"),
        ("basic-memory", cmd_import_basic_memory, "folder", "a basic-memory project folder (read recursively)",
         "basic-memory notes as nodes and relations"),
    ):
        p = add_command(inner, name, func, help_)
        p.add_argument(arg, help=arg_help)
        p.add_argument("--apply", action="store_true", help="write the nodes (default: a dry run)")
