"""The ``autology`` command line. Filled in as the core lands; subsystems add their own subcommands."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autology", description="Project memory for coding agents.")
    parser.add_argument("--root", help="project root (default: $AUTOLOGY_ROOT, $CLAUDE_PROJECT_DIR, git top level, cwd)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from autology_mcp.repo.cli import add_commands as add_index_commands

    add_index_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)
