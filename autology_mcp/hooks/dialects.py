"""One set of hook handlers, four agents: each agent's hook payload mapped onto the Claude Code payload
the handlers read, and their answer put back in the agent's own output shape (issue 30).

``autology hook --agent <agent> <event>``: the event is autology's own name (the handlers'), not the
agent's; ``autology setup <agent>`` writes which agent event runs which (docs/agents.md has the
table). The mapping, as observed with each CLI run for real (docs/agents/<agent>.md):

- **Claude Code** (``claude-code``, the default): the payload is passed as it is.
- **Codex CLI** (``codex``): Claude-like snake_case payloads. It has no Read tool: the model reads a
  file with a shell command, so ``post-tool-use`` on ``Bash`` looks at the command line for a git
  commit (:func:`~autology_mcp.hooks.commands.detect_events`) and for the files it prints
  (:func:`~autology_mcp.hooks.commands.file_reads`). Edits are ``apply_patch``: the files come from
  the patch's ``*** Update File:`` / ``*** Add File:`` lines. Output:
  ``hookSpecificOutput.additionalContext`` named with the payload's ``hook_event_name``; Codex never
  shows a ``systemMessage`` to the model or the user, so none is printed. ``Stop`` (every turn; Codex
  has no SessionEnd) ingests the rollout file and prints nothing.
- **Gemini CLI** (``gemini``): snake_case payloads; the prompt of ``BeforeAgent`` starts with the
  SessionStart context already added to it (``<hook_context>…</hook_context>``), which is not part of
  what the user asked and is cut off. Tools: ``read_file`` (``file_path``, ``start_line``,
  ``end_line``), ``replace`` and ``write_file`` (after the edit ran: the lines now holding
  ``new_string`` are the edited ones), ``run_shell_command``. Output:
  ``hookSpecificOutput.additionalContext``; a ``systemMessage`` is shown to the user.
- **Copilot CLI** (``copilot``): camelCase payloads (``sessionId``, ``toolName``, ``toolArgs`` as an
  object or a JSON string, ``toolResult.textResultForLlm``, ``transcriptPath``); sources ``new`` and
  ``resume``. Tools: ``view`` (``path``, ``view_range``), ``edit`` (``path``, ``old_str``,
  ``new_str``; after the edit ran), ``create``, ``bash``. Output: a top-level ``additionalContext``;
  nothing else reaches the model or the user.

The handlers' words name Claude Code's skills (``/autology:capture``); other agents have the MCP
tools instead, so those names are replaced (:data:`WORDING`). Standard library only: this runs in
the hook process before it asks the running server.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing is not imported at run time: a hook process starts as fast as it can (bench/hooks.py)
if TYPE_CHECKING:
    from typing import Any

AGENTS = ("claude-code", "codex", "gemini", "copilot")
DEFAULT = "claude-code"

# The agent's own event name, when the payload does not say it (hookSpecificOutput must name it).
_EVENT_NAMES = {
    "codex": {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
              "post-tool-use": "PostToolUse", "post-read": "PostToolUse", "post-commit": "PostToolUse",
              "pre-tool-use": "PreToolUse", "pre-compact": "PreCompact", "session-end": "Stop"},
    "gemini": {"session-start": "SessionStart", "user-prompt-submit": "BeforeAgent",
               "post-tool-use": "AfterTool", "post-read": "AfterTool", "post-commit": "AfterTool",
               "pre-tool-use": "AfterTool", "pre-compact": "PreCompress", "session-end": "SessionEnd"},
}
# Events whose additionalContext reaches the model, per agent (the others print nothing).
_CONTEXT_EVENTS = {
    "codex": {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"},
    "gemini": {"SessionStart", "BeforeAgent", "AfterTool"},
    "copilot": {"session-start", "user-prompt-submit", "post-tool-use", "post-read", "post-commit", "pre-tool-use"},
}
# Claude Code's skills, as the other agents reach the same thing.
WORDING = {
    "/autology:capture": "the autology_capture tool",
    "/autology:explore": "autology_search",
    "/autology:tutorial": "docs/agents.md",
}
_HOOK_CONTEXT = re.compile(r"^\s*(?:<hook_context>.*?</hook_context>\s*)+", re.DOTALL)
_PATCH_HEADER = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$")


def handler_calls(agent: str, event: str, payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The handler calls one hook of ``agent`` makes: (autology event, Claude Code-style payload) pairs;
    none when the hook has nothing for autology (a tool that neither reads, edits nor commits)."""
    if agent == DEFAULT:
        if event == "post-tool-use":  # Claude Code names its tools: the handler of each
            handler = _CLAUDE_TOOLS.get(payload.get("tool_name"))  # type: ignore[arg-type]
            return [(handler, payload)] if handler else []
        return [(event, payload)]
    common = _common(agent, payload)
    if event == "post-tool-use":
        return [(e, {**common, **p}) for e, p in _tool_calls(agent, payload)]
    if event == "user-prompt-submit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            return []
        return [(event, {**common, "prompt": _HOOK_CONTEXT.sub("", prompt) if agent == "gemini" else prompt})]
    if event == "session-start":
        source = payload.get("source")
        return [(event, {**common, "source": "startup" if source in (None, "new") else source})]
    return [(event, {**common, **{k: v for k, v in payload.items() if k not in common and k not in _CAMEL}})]


_CAMEL = {"sessionId", "transcriptPath", "hookEventName"}
_CLAUDE_TOOLS = {"Read": "post-read", "Bash": "post-commit", "Edit": "pre-tool-use", "Write": "pre-tool-use",
                 "MultiEdit": "pre-tool-use", "NotebookEdit": "pre-tool-use"}


def _common(agent: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The fields every handler reads, under Claude Code's names, and which agent asked."""
    out: dict[str, Any] = {"agent": agent}
    for ours, names in (("session_id", ("session_id", "sessionId")), ("cwd", ("cwd",)),
                        ("transcript_path", ("transcript_path", "transcriptPath"))):
        value = next((payload[n] for n in names if isinstance(payload.get(n), str) and payload[n]), None)
        if value is not None:
            out[ours] = value
    return out


def _tool_calls(agent: str, payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    name = payload.get("tool_name", payload.get("toolName"))
    args = payload.get("tool_input", payload.get("toolArgs"))
    if isinstance(args, str):  # Copilot documents toolArgs as a JSON string
        try:
            args = json.loads(args)
        except ValueError:
            args = {}
    if not isinstance(name, str) or not isinstance(args, dict):
        return []
    if agent == "codex":
        return _codex_tool(name, args, payload.get("tool_response"))
    if agent == "gemini":
        return _gemini_tool(name, args, payload.get("tool_response"))
    if agent == "copilot":
        return _copilot_tool(name, args, payload.get("toolResult", payload.get("tool_result")))
    return []


def _read(path: Any, start: Any = None, end: Any = None) -> tuple[str, dict[str, Any]]:
    tool_input: dict[str, Any] = {"file_path": path}
    if isinstance(start, int) and start > 0:
        tool_input["offset"] = start
        if isinstance(end, int) and end >= start:
            tool_input["limit"] = end - start + 1
    return "post-read", {"tool_name": "Read", "tool_input": tool_input}


def _edited(path: Any, now: Any = None) -> tuple[str, dict[str, Any]]:
    """An edit that already ran: the text it wrote (``now``) says which lines it touched."""
    if isinstance(now, str) and now:
        return "pre-tool-use", {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": now}}
    return "pre-tool-use", {"tool_name": "Write", "tool_input": {"file_path": path}}


def _shell(command: Any, stdout: Any) -> list[tuple[str, dict[str, Any]]]:
    from autology_mcp.hooks.commands import detect_events, file_reads

    if not isinstance(command, str):
        return []
    calls: list[tuple[str, dict[str, Any]]] = []
    if detect_events(command):
        output = stdout if isinstance(stdout, str) else ""
        calls.append(("post-commit", {"tool_name": "Bash", "tool_input": {"command": command},
                                      "tool_response": {"stdout": output}}))
    calls.extend(_read(r.path, r.start, r.end) for r in file_reads(command))
    return calls


def _codex_tool(name: str, args: dict[str, Any], response: Any) -> list[tuple[str, dict[str, Any]]]:
    if name == "Bash":
        return _shell(args.get("command"), response)
    if name in ("apply_patch", "Edit", "Write") and isinstance(args.get("command"), str):
        return [_patched(path, hunks) for path, hunks in patch_hunks(args["command"]).items()]
    return []


def patch_hunks(patch: str) -> dict[str, list[str] | None]:
    """The files an apply_patch text updates or adds, each with the text each of its hunks left in the
    file (context and added lines; None for an added file: all of it is new). Deleted files are left out."""
    files: dict[str, list[str] | None] = {}
    current: list[str] | None = None
    for line in patch.splitlines():
        header = _PATCH_HEADER.match(line)
        if header:
            kind, path = header.groups()
            current = None
            if kind == "Update":
                current = files.setdefault(path, [])
                current.append("")
            elif kind == "Add":
                files[path] = None
            continue
        if current is None or line.startswith("*** "):  # "*** Move to:", "*** End of File", "*** End Patch"
            continue
        if line.startswith("@@"):
            current.append("")
        elif line[:1] in (" ", "+"):
            current[-1] += line[1:] + "\n"
    return {path: [h.rstrip("\n") for h in hunks if h.strip()] if hunks is not None else None
            for path, hunks in files.items()}


def _patched(path: str, hunks: list[str] | None) -> tuple[str, dict[str, Any]]:
    """A patch that already ran: the text of its hunks says which lines it touched (a new file: all)."""
    if not hunks:
        return _edited(path)
    return "pre-tool-use", {"tool_name": "MultiEdit", "tool_input": {
        "file_path": path, "edits": [{"old_string": text, "new_string": text} for text in hunks]}}


def _gemini_tool(name: str, args: dict[str, Any], response: Any) -> list[tuple[str, dict[str, Any]]]:
    if name == "read_file":
        return [_read(args.get("file_path") or args.get("absolute_path"), args.get("start_line"), args.get("end_line"))]
    if name == "read_many_files" and isinstance(args.get("paths"), list):
        return [_read(p) for p in args["paths"] if isinstance(p, str) and not set(p) & set("*?[")]
    if name == "replace":
        return [_edited(args.get("file_path"), args.get("new_string"))]
    if name == "write_file":
        return [_edited(args.get("file_path"))]
    if name == "run_shell_command":
        output = response.get("llmContent") if isinstance(response, dict) else response
        return _shell(args.get("command"), output)
    return []


def _copilot_tool(name: str, args: dict[str, Any], result: Any) -> list[tuple[str, dict[str, Any]]]:
    path = args.get("path")
    if name in ("view", "Read"):
        lines = args.get("view_range")
        start, end = lines if isinstance(lines, list) and len(lines) == 2 else (None, None)
        return [_read(path or args.get("file_path"), start, end)]
    if name in ("edit", "str_replace"):
        return [_edited(path, args.get("new_str"))]
    if name == "create":
        return [_edited(path)]
    if name in ("bash", "Bash"):
        output = result.get("textResultForLlm") if isinstance(result, dict) else result
        return _shell(args.get("command"), output)
    return []


def agent_output(agent: str, event: str, payload: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The handlers' Claude Code-shaped results as this agent's hook output; None to print nothing."""
    results = [r for r in results if r]
    if not results:
        return None
    if agent == DEFAULT and len(results) == 1:
        return results[0]
    context = "\n\n".join(_context(r) for r in results if _context(r))
    message = " ".join(r["systemMessage"] for r in results if isinstance(r.get("systemMessage"), str))
    if agent != DEFAULT:
        context, message = worded(context), worded(message)
    if agent == "copilot":
        return {"additionalContext": context} if context and event in _CONTEXT_EVENTS["copilot"] else None
    name = payload.get("hook_event_name") if isinstance(payload.get("hook_event_name"), str) else None
    name = name or _EVENT_NAMES.get(agent, {}).get(event) or _claude_event(results)
    out: dict[str, Any] = {}
    if context and (agent == DEFAULT or name in _CONTEXT_EVENTS[agent]):
        out["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": context}
    if message and agent in (DEFAULT, "gemini"):  # Codex shows a systemMessage to nobody
        out["systemMessage"] = message
    return out or None


def _context(result: dict[str, Any]) -> str:
    specific = result.get("hookSpecificOutput")
    text = specific.get("additionalContext") if isinstance(specific, dict) else None
    return text if isinstance(text, str) else ""


def _claude_event(results: list[dict[str, Any]]) -> str:
    specific = results[0].get("hookSpecificOutput")
    return specific.get("hookEventName", "") if isinstance(specific, dict) else ""


def worded(text: str) -> str:
    for claude, other in WORDING.items():
        text = text.replace(claude, other)
    return text
