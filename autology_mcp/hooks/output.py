"""The JSON a command hook prints on stdout, in Claude Code's documented shapes.

- ``hookSpecificOutput.additionalContext`` (with ``hookEventName``) is added to Claude's context;
  Claude Code accepts it for ``PostToolUse`` and ``SessionStart`` (among others).
- ``systemMessage`` is shown to the user; it is what ``PreCompact`` and ``SessionEnd`` get, since
  they take no additional context. (For ``PreCompact``, Claude Code 2.1 also appends the hook's
  stdout to the compaction instructions, so its message is written to read well there too.)
"""

from __future__ import annotations

from typing import Any

RECALL_MAX_CHARS = 1500


def additional_context(event: str, text: str, system_message: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    if system_message:
        out["systemMessage"] = system_message
    return out


def system_message(text: str) -> dict[str, Any]:
    return {"systemMessage": text}
