"""``autology hook [--agent AGENT] <event>``: run a hook (the handlers are in :mod:`autology_mcp.hooks`).

``main`` sends ``autology hook ...`` straight to :mod:`autology_mcp.hooks.__main__` without building this
parser; this registration gives the command its place in ``autology --help``.
"""

from __future__ import annotations

import argparse
import sys

from autology_mcp.hooks import EVENTS, run_agent
from autology_mcp.hooks.dialects import AGENTS, DEFAULT


def cmd_hook(args: argparse.Namespace) -> int:
    try:
        stdin_text = sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        return 0
    text = run_agent(args.agent, args.event, stdin_text, getattr(args, "root", None))
    if text:
        sys.stdout.write(text + "\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hook",
        help="run a hook of a coding agent (reads the JSON payload on stdin)",
        description="Hook handlers: read the agent's hook payload on stdin, print the agent's hook JSON on stdout, "
        "always exit 0. `autology setup <agent>` writes the hook configuration that calls these.",
    )
    p.add_argument("--agent", choices=AGENTS, default=DEFAULT,
                   help="whose payload comes in and whose output shape goes out (default: claude-code)")
    p.add_argument("event", choices=EVENTS, help="autology's hook event being handled (its JSON comes on stdin)")
    p.set_defaults(func=cmd_hook)
