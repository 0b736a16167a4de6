"""``autology setup <agent> [--remove] [--dry-run] [--yes]``: write (or take out) a project's configuration
for a coding agent: the MCP server, the hooks and an instructions section (:mod:`autology_mcp.setup`).

It shows every change as a diff first; it writes them after a yes at the terminal, or with ``--yes``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autology_mcp.cli.common import confirm, root_of
from autology_mcp.setup.agents import AGENTS, TRUST


def _verb(change) -> str:
    if change.before is None:
        return "create"
    if change.after is None:
        return "delete"
    return change.how or "update"


def cmd_setup(args: argparse.Namespace) -> int:
    from autology_mcp.setup.apply import plan, plan_remove, write

    root = root_of(args)
    changes = plan_remove(root, args.agent) if args.remove else plan(root, args.agent)
    what = f"autology for {args.agent} in {root}"
    if not changes:
        print(f"{what}: {'nothing to take out' if args.remove else 'already set up, nothing to change'}.")
        if not args.remove:
            _print_hook_state(root, args.agent)
        return 0
    print(f"{'Taking out' if args.remove else 'Setting up'} {what}: {len(changes)} file(s).")
    for change in changes:
        print(f"\n== {change.path}: {_verb(change)}")
        sys.stdout.write(change.diff())
    if args.dry_run:
        print("\n(dry run: nothing written)")
        return 0
    if not confirm(args.yes, "\nWrite these changes?", "\nNothing written: run again with --yes to write these changes.",
                   "Nothing written."):
        return 1
    if not args.remove and not (root / ".autology" / "nodes").is_dir():
        from autology_mcp.knowledge.store import NodeStore

        store = NodeStore(root)
        store.init()
        store.close()
        print(f"created the knowledge graph in {root / '.autology'} (autology init)")
    write(root, args.agent, changes, removing=args.remove)
    print(f"\n✓ {'taken out' if args.remove else 'written'}: {', '.join(c.path for c in changes)}")
    if not args.remove:
        _print_hook_state(root, args.agent)
        print("Commit these files so the team shares them; each teammate installs autology and, when its path "
              "differs, runs `autology setup` once.")
    return 0


def _print_hook_state(root: Path, agent: str) -> None:
    """Whether the agent will run the hooks, read from its own trust state (``autology doctor`` says the same),
    and the step that turns them on when it will not."""
    from autology_mcp.setup.hook_state import RUNS, hook_state

    state = hook_state(agent, root)
    print("\n".join(state.lines()))
    if state.state != RUNS:
        print(f"(Each user takes this step once: {TRUST[agent]})")


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "setup",
        help="write a coding agent's configuration for autology (MCP server, hooks, instructions)",
        description="Write the project's configuration for a coding agent: the MCP server registration, the hooks "
        "that bring project memory to the model unasked, and a short instructions section. Shows the changes first; "
        "keeps everything of yours; --remove undoes it (byte for byte when the files are as setup left them).",
    )
    p.add_argument("agent", choices=AGENTS, help="the coding agent to set up")
    p.add_argument("--remove", action="store_true", help="take autology's configuration out again")
    p.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    p.add_argument("--yes", "-y", action="store_true", help="write without asking")
    p.set_defaults(func=cmd_setup)
