"""Setting up, serving and maintaining the project's store:

    autology serve [--no-watch]     the MCP server on stdio
    autology init                   create .autology/ and register the git merge driver
    autology merge-driver O A B P   git's merge driver for node files
    autology merge-file PATH ...    merge a node file git left unmerged again, from git's three versions
    autology rebuild                every derived index from the node files
    autology doctor                 malformed files, rule breaks, duplicate ids, dangling relations, the merge driver;
                                    and whether each agent set up here will run autology's hooks (the step that
                                    turns them on when it will not: :mod:`autology_mcp.setup.hook_state`)
"""

from __future__ import annotations

import argparse

from autology_mcp.cli.common import add_command, emit, require_store, root_of


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
    if not args.no_git:
        import shlex
        import sys

        from autology_mcp.knowledge.merge import register_merge_driver

        for change in register_merge_driver(store.root, f"{shlex.quote(sys.executable)} -m autology_mcp"):
            print(f"git: {change}")
    print(f"✓ autology store ready at {store.paths.base} ({report.scanned} node files)")
    return 0


def cmd_merge_driver(args: argparse.Namespace) -> int:
    """git's custom merge driver (``%O %A %B %P``): exit 0 when merged cleanly, 1 when a person must look."""
    import sys
    from pathlib import Path

    from autology_mcp.knowledge.merge import merge_files

    try:
        result = merge_files(Path(args.base), Path(args.ours), Path(args.theirs), args.path or args.ours)
    except (OSError, UnicodeDecodeError) as exc:  # leave ours as it is: git reports the conflict
        print(f"autology merge-driver: {exc}", file=sys.stderr)
        return 1
    for conflict in result.conflicts:
        print(f"autology merge-driver: {args.path or args.ours}: {conflict}", file=sys.stderr)
    return 1 if result.conflicts else 0


def cmd_merge_file(args: argparse.Namespace) -> int:
    """Merge node files git left unmerged (a failed merge driver left only one side) from git's three
    versions: 0 when every one merged cleanly (then `git add` them), 1 when a person must look."""
    import sys
    from pathlib import Path

    from autology_mcp.common.errors import StorageError
    from autology_mcp.knowledge.merge import merge_unmerged

    code = 0
    for name in args.paths:
        try:
            result = merge_unmerged(root_of(args), Path(name))
        except (StorageError, OSError, UnicodeDecodeError, ValueError) as exc:
            print(f"✗ {name}: {exc}", file=sys.stderr)
            code = 1
            continue
        if result.conflicts:
            code = 1
            print(f"✗ {name}: merged with conflicts to resolve by hand: " + "; ".join(result.conflicts))
        else:
            print(f"✓ {name}: merged both sides; check it, then `git add {name}`")
    return code


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
    from autology_mcp.cli.semantic import status_lines
    from autology_mcp.knowledge.doctor import diagnose, render
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.setup import hook_state

    require_store(args, "doctor")
    store = NodeStore(root_of(args))
    report = diagnose(store)
    semantic = status_lines(store.root)  # semantic recall: a line of its own, never a failure
    hooks = hook_state.hook_states(store.root)  # will each agent set up here run the hooks: a block of its own
    emit(args, {**report.to_dict(), "semantic": semantic, "hooks": [h.to_dict() for h in hooks]},
         lambda: render(report, store.root) + "\n" + "\n".join(semantic) + "\n" + hook_state.render(hooks))
    return 0 if report.ok else 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the store commands on the top-level subparsers."""
    p = add_command(sub, "serve", cmd_serve, "run the MCP server on stdio", json_flag=False)
    p.add_argument("--no-watch", action="store_true", help="do not watch node files for outside changes")
    p = add_command(sub, "init", cmd_init, "create .autology/ (nodes folders, .gitignore for derived data) and register"
                    " the git merge driver for node files", json_flag=False)
    p.add_argument("--no-git", action="store_true", help="do not register the merge driver (.gitattributes, git config)")
    p.add_argument("--git", action="store_true",
                   help="register the merge driver (the default; for an existing store or a fresh clone, init is safe to rerun)")
    p = add_command(sub, "merge-driver", cmd_merge_driver, "git's merge driver for node files (autology init registers it)",
                    json_flag=False)
    p.add_argument("base", help="%%O: the common ancestor's version")
    p.add_argument("ours", help="%%A: our version; the result is written here")
    p.add_argument("theirs", help="%%B: their version")
    p.add_argument("path", nargs="?", help="%%P: the file's path in the repository (for messages)")
    p = add_command(sub, "merge-file", cmd_merge_file, "merge node files git left unmerged again (a merge driver"
                    " that failed left only one side), from the three versions git keeps", json_flag=False)
    p.add_argument("paths", nargs="+", metavar="PATH", help="a node file git lists as unmerged (`git status`)")
    add_command(sub, "rebuild", cmd_rebuild, "rebuild every derived index from the node files")
    add_command(sub, "doctor", cmd_doctor, "report malformed files, rules hand-written files break, duplicate ids, dangling"
                " relations, a stale graph index, the git merge driver's setup, and whether each agent set up here will"
                " run autology's hooks")
