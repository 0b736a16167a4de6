"""Setting up, serving and maintaining the project's store:

    autology serve [--no-watch]     the MCP server on stdio
    autology init                   create .autology/
    autology rebuild                every derived index from the node files
    autology doctor                 malformed files, duplicate ids, dangling relations, a stale graph index
"""

from __future__ import annotations

import argparse

from autology_mcp.cli.common import add_command, emit, root_of


def cmd_serve(args: argparse.Namespace) -> int:
    from autology_mcp.server.app import serve
    from autology_mcp.server.startup import begin

    serve(begin(root_of(args), watch=not args.no_watch))
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root_of(args))
    created = store.init()
    report = store.reconcile()
    store.close()
    if created:
        for path in created:
            print(f"created {path}")
    print(f"✓ autology store ready at {store.paths.base} ({report.scanned} node files)")
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    import time

    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root_of(args))
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

    emit(args, data, human)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.doctor import diagnose, render
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root_of(args))
    report = diagnose(store)
    emit(args, report.to_dict(), lambda: render(report, store.root))
    return 0 if report.ok else 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the store commands on the top-level subparsers."""
    p = add_command(sub, "serve", cmd_serve, "run the MCP server on stdio", json_flag=False)
    p.add_argument("--no-watch", action="store_true", help="do not watch node files for outside changes")
    add_command(sub, "init", cmd_init, "create .autology/ (nodes folders, .gitignore for derived data)", json_flag=False)
    add_command(sub, "rebuild", cmd_rebuild, "rebuild every derived index from the node files")
    add_command(sub, "doctor", cmd_doctor, "report malformed files, duplicate ids, dangling relations, a stale graph index")
