"""``python -m autology_mcp.hooks <event>``: a hook without the rest of the CLI, so it starts faster
(the pre-compact and session-end hooks then import no pydantic at all). Same behaviour as
``autology hook <event>``: JSON payload on stdin, hook JSON on stdout, always exit 0."""

from __future__ import annotations

import sys

from autology_mcp.hooks import EVENTS, run


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in EVENTS:
        print(f"usage: autology hook {{{','.join(EVENTS)}}} < payload.json", file=sys.stderr)
        return 0
    try:
        text = run(args[0], sys.stdin.read())
    except (OSError, UnicodeDecodeError):
        text = None
    if text:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
