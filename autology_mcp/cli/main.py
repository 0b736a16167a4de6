"""The ``autology`` command line: ``serve`` for MCP clients, and human-facing commands that mirror the tools.

One module per command group registers its commands here: ``store`` (serve, init, rebuild, doctor),
``nodes`` (the seven tools' twins and show), ``index`` (the code index), ``hook`` (the agents' hooks), ``setup`` (an agent's configuration),
``graph`` (graph walks, export, analyze), ``claims`` (check-claims), ``review`` (nodes whose text addresses the agent), ``search`` (search, context) and
``sessions`` (session memory), ``history`` (the repository's commits), ``semantic`` (semantic recall, an optional extra).

Every command accepts ``--root``, before or after the command name; the data commands accept
``--json`` for scripts. Errors print ``error: <message>`` on stderr and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import sys

from autology_mcp.common.errors import AutologyError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autology",
        description="Project memory for coding agents: a Markdown knowledge graph in .autology/, served over MCP.",
    )
    parser.add_argument("--root", help=ROOT_HELP)
    from autology_mcp import __version__

    parser.add_argument("--version", action="version", version=f"autology {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from autology_mcp.cli import (  # not needed by `autology hook`
        claims,
        graph,
        history,
        hook,
        imports,
        index,
        nodes,
        review,
        search,
        semantic,
        sessions,
        setup,
        store,
    )

    for group in (store, nodes, review, index, hook, setup, graph, claims, search, sessions, history, semantic, imports):
        group.add_commands(sub)
    _accept_global_options(parser)
    return parser


ROOT_HELP = "project root (default: $AUTOLOGY_ROOT, then $CLAUDE_PROJECT_DIR, then the git top level, then cwd)"


def _accept_global_options(parser: argparse.ArgumentParser) -> None:
    """``--root`` after the command name too (``autology serve --root DIR``, the way people write it).
    The subcommands' copies default to SUPPRESS, so one given before the command is not overwritten."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                if not any("--root" in a.option_strings for a in child._actions):
                    child.add_argument("--root", default=argparse.SUPPRESS, help=ROOT_HELP)
                _accept_global_options(child)


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what the closed pipe did not take
    raises nothing more (Python's documented way to end quietly on SIGPIPE)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv)[:1] == ["hook"]:  # issue 4: hooks skip the CLI's imports (<300 ms)
        from autology_mcp.hooks.__main__ import main as hook_main

        return hook_main((sys.argv[1:] if argv is None else argv)[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, not at the interpreter's exit: a closed pipe is then ours to end quietly
        return code
    except AutologyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `autology sessions list | head`: the reader has what it wanted, as with `git log | head`
        _drop_stdout()
        return 141  # what a shell reports for a process ended by SIGPIPE
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
