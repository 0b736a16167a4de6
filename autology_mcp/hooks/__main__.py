"""``python -m autology_mcp.hooks <event>``: a hook without the rest of the CLI, so it starts faster.
Same behaviour as ``autology hook <event>``: JSON payload on stdin, hook JSON on stdout, always exit 0.

For the events a running ``autology serve`` answers (:data:`autology_mcp.hooks.SERVED`), the
payload goes to it first (:mod:`autology_mcp.hooks.client`); without one, the hook runs here."""

from __future__ import annotations

import os
import sys

from autology_mcp.hooks import EVENTS, SERVED, run


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in EVENTS:
        print(f"usage: autology hook {{{','.join(EVENTS)}}} < payload.json", file=sys.stderr)
        return 0
    try:
        stdin_text = sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        return 0
    text = None
    answered = False
    if args[0] in SERVED:
        from autology_mcp.hooks.client import ask_server

        answered, text = ask_server(args[0], stdin_text)
        if answered and os.environ.get("AUTOLOGY_HOOK_DEBUG"):
            print("autology hook: answered by the running server", file=sys.stderr)
    if not answered:
        text = run(args[0], stdin_text)
    if text:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
