"""What the command groups share: the project root, ``--json`` output, subcommand groups, reading content."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autology_mcp.common.paths import resolve_root


def root_of(args: argparse.Namespace) -> Path:
    """The project root: ``--root``, then the usual fallbacks (see :func:`resolve_root`)."""
    return resolve_root(getattr(args, "root", None))


def add_command(
    sub: argparse._SubParsersAction, name: str, func: Callable[[argparse.Namespace], int], help: str, json_flag: bool = True
) -> argparse.ArgumentParser:
    """Register ``autology <name>`` running ``func(args)``, with ``--json`` unless ``json_flag`` is False."""
    p = sub.add_parser(name, help=help, description=help)
    if json_flag:
        p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.set_defaults(func=func)
    return p


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
        p.set_defaults(func=lambda args: func(args, root_of(args)))  # errors: main() prints them, exit 1
        return p

    return leaf


def require_store(args: argparse.Namespace, command: str, nodes: bool = True) -> Path:
    """The project root, when it has a store; a read-only command in a folder without one says so and
    creates nothing (``nodes=False``: any ``.autology/`` will do, e.g. one holding only a code index)."""
    from autology_mcp.common.errors import AutologyError
    from autology_mcp.common.paths import ProjectPaths

    root = root_of(args)
    paths = ProjectPaths(root)
    if not (paths.nodes.is_dir() if nodes else paths.base.is_dir()):
        raise AutologyError(
            f"no autology store here ({root}), so `autology {command}` has nothing to read (nothing was created);"
            " run `autology init` to create one" + ("" if nodes else ", or `autology index build` for the code alone")
        )
    return root


def open_autology(args: argparse.Namespace):
    from autology_mcp.knowledge.service import Autology

    return Autology.open(root_of(args))


def node_id(store: Any, text: str, field: str = "id") -> str:
    """The full id a person's argument names: an id, a unique id prefix (6+ characters) or an exact title."""
    from autology_mcp.knowledge.names import resolve_node

    return resolve_node(store.index, text, field)


def emit(args: argparse.Namespace, data: Any, human: Callable[[], str]) -> None:
    if getattr(args, "json", False):
        if hasattr(data, "model_dump"):
            data = data.model_dump(mode="json")
        elif isinstance(data, list):
            data = [d.model_dump(mode="json") if hasattr(d, "model_dump") else d for d in data]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(human())


def read_content(value: str | None, args_file: str | None) -> str | None:
    """Content from --content, or from a file (``-`` reads stdin)."""
    if args_file is None:
        return value
    if args_file == "-":
        return sys.stdin.read()
    return Path(args_file).read_text(encoding="utf-8")


def confirm(yes: bool, question: str, off_terminal: str, declined: str | None = None) -> bool:
    """Go ahead? Yes with ``--yes``, or when a person at a terminal answers y. Off a terminal without
    ``--yes``, ``off_terminal`` goes to stderr and nothing is asked; ``declined`` is printed after a no."""
    if yes:
        return True
    if not sys.stdin.isatty():
        print(off_terminal, file=sys.stderr)
        return False
    if input(f"{question} [y/N] ").strip().lower() in ("y", "yes"):
        return True
    if declined:
        print(declined)
    return False


def served(root: Path, event: str, request: dict[str, Any]) -> Any | None:
    """The answer of the project's running ``autology serve`` to a command-line search (issue 40): warm,
    and with the semantic model it already holds, where a new process would import everything and load
    the model again. None when no server of this project answers; the command then runs in-process."""
    from autology_mcp.hooks.client import ask_server

    answered, output = ask_server(event, json.dumps({"cwd": str(root), **request}, ensure_ascii=False), root=str(root))
    if not answered or output is None:
        return None
    if os.environ.get("AUTOLOGY_HOOK_DEBUG"):
        print("autology: answered by the running server", file=sys.stderr)
    try:
        return json.loads(output)
    except ValueError:
        return None
