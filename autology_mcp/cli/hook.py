"""``autology hook <event>``: run a Claude Code hook (the handlers are in :mod:`autology_mcp.hooks`).

``main`` sends ``autology hook ...`` straight to :mod:`autology_mcp.hooks.__main__` without building this
parser; this registration gives the command its place in ``autology --help``.
"""

from __future__ import annotations

import argparse
import sys

from autology_mcp.hooks import EVENTS, run


def cmd_hook(args: argparse.Namespace) -> int:
    try:
        stdin_text = sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        return 0
    text = run(args.event, stdin_text, getattr(args, "root", None))
    if text:
        sys.stdout.write(text + "\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hook",
        help="run a Claude Code hook (reads the JSON payload on stdin)",
        description="Claude Code hook handlers: read the hook payload on stdin, print the hook JSON on stdout, "
        "always exit 0.",
    )
    p.add_argument("event", choices=EVENTS, help="the Claude Code hook event being handled (its JSON comes on stdin)")
    p.set_defaults(func=cmd_hook)
