"""``autology index ...`` commands."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``autology index`` on the top-level subparsers."""
    parser = sub.add_parser("index", help="repository index: build, query, verify")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
