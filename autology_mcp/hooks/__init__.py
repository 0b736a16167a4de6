"""The hooks: ``autology hook [--agent AGENT] <event>`` (registered by :mod:`autology_mcp.cli.hook`) and
``python -m autology_mcp.hooks [--agent AGENT] <event>``, for post-commit, pre-compact, session-end,
session-start, user-prompt-submit, pre-tool-use, post-read and post-tool-use.

Each reads the agent's JSON payload on stdin and prints the agent's JSON on stdout. The handlers
read Claude Code's payload and answer in its shape (:mod:`autology_mcp.hooks.output`); Codex CLI,
Gemini CLI and Copilot CLI payloads are mapped onto them and their answers back
(:mod:`autology_mcp.hooks.dialects`). They fail open: malformed input, a missing store or any error
means exit 0 and no output (a traceback goes to stderr only when ``AUTOLOGY_HOOK_DEBUG`` is set).
They stay fast by importing neither the MCP SDK nor NetworkX.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing is not imported at run time: a hook process starts as fast as it can (bench/hooks.py)
if TYPE_CHECKING:
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
# post-tool-use: one hook after any tool, for agents that have no per-tool matcher or no Read tool; the
# dialect finds what the tool did (read a file, edited one, committed) and calls those handlers.
EVENTS = (*HANDLERS, "post-tool-use")
# The events a running `autology serve` answers for the hook process (hooks/service.py): read-only,
# and run on every prompt or file, so they must be fast.
SERVED = ("user-prompt-submit", "post-read", "pre-tool-use", "session-start")


def run(event: str, stdin_text: str, root: str | None = None) -> str | None:
    """The text to print for one Claude Code hook invocation, or None. Never raises."""
    try:
        payload = json.loads(stdin_text)
        if not isinstance(payload, dict) or event not in HANDLERS:
            return None
        from importlib import import_module

        module, function = HANDLERS[event]
        result: dict[str, Any] | None = getattr(import_module(module), function)(payload, root)
        return json.dumps(result, ensure_ascii=False) if result else None
    except Exception:  # fail open: a hook must never get in the way
        _debug()
        return None


Ask = Callable[[str, str], tuple[bool, "str | None"]]


def run_agent(agent: str, event: str, stdin_text: str, root: str | None = None, ask: Ask | None = None) -> str | None:
    """The text to print for one hook of ``agent`` (its own payload in, its own shape out), or None.

    Each handler call the payload maps to (:func:`~autology_mcp.hooks.dialects.handler_calls`) goes to
    ``ask`` first when it is one a running server answers (``ask(event, claude_payload_text)`` returns
    (answered, output)); the rest, and any not answered, run here. Claude Code's own payload goes as it
    is. Never raises."""
    try:
        from autology_mcp.hooks.dialects import DEFAULT, agent_output, handler_calls

        if agent == DEFAULT and event in HANDLERS:  # Claude Code's payload, as it is
            text = _answer(event, stdin_text, root, ask)
            text = text if text is None or os.environ.get("CLAUDE_PLUGIN_ROOT") else _without_skills(text)
            return _plain(text) if event == "pre-compact" else text
        payload = json.loads(stdin_text)
        if not isinstance(payload, dict):
            return None
        results: list[dict[str, Any]] = []
        for handler_event, handler_payload in handler_calls(agent, event, payload):
            if handler_event not in HANDLERS:
                continue
            output = _answer(handler_event, json.dumps(handler_payload, ensure_ascii=False), root, ask)
            result = json.loads(output) if output else None
            if isinstance(result, dict):
                results.append(result)
        out = agent_output(agent, event, payload, results)
        return json.dumps(out, ensure_ascii=False) if out else None
    except Exception:  # fail open
        _debug()
        return None


def _plain(text: str | None) -> str | None:
    """PreCompact's message as plain text: Claude Code 2.1 shows a PreCompact hook's output as it is
    ("completed successfully: <output>") and appends it to the compaction instructions; JSON there is
    noise to the person (issue 39)."""
    try:
        message = json.loads(text).get("systemMessage") if text else None
    except (ValueError, AttributeError):
        return text
    return message if isinstance(message, str) else text


def _without_skills(text: str) -> str:
    """Claude Code's output for a project set up with ``autology setup claude-code`` and no plugin:
    Claude Code sets ``CLAUDE_PLUGIN_ROOT`` only for a plugin's hooks, and without the plugin there are
    no ``/autology:…`` skills, so the text names the MCP tools instead, as for the other agents."""
    from autology_mcp.hooks.dialects import WORDING, worded

    if not any(skill in text for skill in WORDING):
        return text
    try:
        out = json.loads(text)
    except ValueError:
        return text
    if isinstance(out.get("systemMessage"), str):
        out["systemMessage"] = worded(out["systemMessage"])
    specific = out.get("hookSpecificOutput")
    if isinstance(specific, dict) and isinstance(specific.get("additionalContext"), str):
        specific["additionalContext"] = worded(specific["additionalContext"])
    return json.dumps(out, ensure_ascii=False)


def _answer(event: str, text: str, root: str | None, ask: Ask | None) -> str | None:
    """One handler's output for a Claude Code-shaped payload: from the running server when it answers
    this event, else run here."""
    if ask is not None and event in SERVED:
        answered, output = ask(event, text)
        if answered:
            if os.environ.get("AUTOLOGY_HOOK_DEBUG"):
                print("autology hook: answered by the running server", file=sys.stderr)
            return output
    return run(event, text, root)


def _debug() -> None:
    if os.environ.get("AUTOLOGY_HOOK_DEBUG"):
        import traceback

        traceback.print_exc(file=sys.stderr)
