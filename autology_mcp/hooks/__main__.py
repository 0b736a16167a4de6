"""``python -m autology_mcp.hooks [--agent AGENT] <event>``: a hook without the rest of the CLI, so it
starts faster. Same behaviour as ``autology hook``: JSON payload on stdin, hook JSON on stdout, always
exit 0. ``--agent`` (default ``claude-code``) names whose payload comes in and whose shape goes out
(:mod:`autology_mcp.hooks.dialects`).

For the events a running ``autology serve`` answers (:data:`autology_mcp.hooks.SERVED`), the
payload goes to it first (:mod:`autology_mcp.hooks.client`); without one, the hook runs here."""

from __future__ import annotations

import os
import sys

from autology_mcp.hooks import EVENTS, run_agent
from autology_mcp.hooks.dialects import AGENTS, DEFAULT


def _usage() -> int:
    print(f"usage: autology hook [--agent {{{','.join(AGENTS)}}}] {{{','.join(EVENTS)}}} < payload.json",
          file=sys.stderr)
    return 0


def _agent(args: list[str]) -> tuple[str, list[str]] | None:
    """(agent, the other arguments) from ``--agent NAME`` or ``--agent=NAME`` anywhere; None when malformed."""
    agent, rest = DEFAULT, []
    words = iter(args)
    for word in words:
        if word == "--agent":
            agent = next(words, "")
        elif word.startswith("--agent="):
            agent = word.split("=", 1)[1]
        else:
            rest.append(word)
    return (agent, rest) if agent in AGENTS else None


def main(argv: list[str] | None = None) -> int:
    parsed = _agent(list(sys.argv[1:] if argv is None else argv))
    if parsed is None or len(parsed[1]) != 1 or parsed[1][0] not in EVENTS:
        return _usage()
    agent, (event,) = parsed
    try:
        stdin_text = sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        return 0
    from autology_mcp.hooks.client import ask_server

    # A hook run here has no model loaded and no time to load one: semantic recall (issue 31) is used only
    # by the running server, which keeps its model warm (autology_mcp.semantic.runtime).
    os.environ.setdefault("AUTOLOGY_SEMANTIC_LOAD", "never")

    text = run_agent(agent, event, stdin_text, ask=ask_server)
    if text:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
