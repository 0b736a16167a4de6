"""Claude Code hooks: ``autology hook <event>`` (registered by :mod:`autology_mcp.cli.hook`) and
``python -m autology_mcp.hooks <event>``, for post-commit, pre-compact, session-end, session-start,
user-prompt-submit, pre-tool-use and post-read.

Each reads Claude Code's JSON payload on stdin and prints the documented JSON on stdout (see
:mod:`autology_mcp.hooks.output`). They fail open: malformed input, a missing store or any error
means exit 0 and no output (a traceback goes to stderr only when ``AUTOLOGY_HOOK_DEBUG`` is set).
They stay fast by importing neither the MCP SDK nor NetworkX.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

# event -> (module, function): a hook imports only its own handler's module.
HANDLERS = {
    "post-commit": ("autology_mcp.hooks.handlers", "post_commit"),
    "pre-compact": ("autology_mcp.hooks.handlers", "pre_compact"),
    "session-end": ("autology_mcp.hooks.handlers", "session_end"),
    "session-start": ("autology_mcp.hooks.handlers", "session_start"),
    "user-prompt-submit": ("autology_mcp.hooks.prompt", "user_prompt_submit"),
    "pre-tool-use": ("autology_mcp.hooks.edit", "pre_tool_use"),
    "post-read": ("autology_mcp.hooks.edit", "post_read"),
}
EVENTS = tuple(HANDLERS)
# The events a running `autology serve` answers for the hook process (hooks/service.py): read-only,
# and run on every prompt or file, so they must be fast.
SERVED = ("user-prompt-submit", "post-read", "pre-tool-use", "session-start")


def run(event: str, stdin_text: str, root: str | None = None) -> str | None:
    """The text to print for one hook invocation, or None. Never raises."""
    try:
        payload = json.loads(stdin_text)
        if not isinstance(payload, dict):
            return None
        from importlib import import_module

        module, function = HANDLERS[event]
        result: dict[str, Any] | None = getattr(import_module(module), function)(payload, root)
        return json.dumps(result, ensure_ascii=False) if result else None
    except Exception:  # fail open: a hook must never get in the way
        if os.environ.get("AUTOLOGY_HOOK_DEBUG"):
            import traceback

            traceback.print_exc(file=sys.stderr)
        return None
