"""GitHub Copilot CLI session logs (``$COPILOT_HOME/session-state/<session id>/events.jsonl``) into turns.

Every line is an event ``{"type", "data", "id", "timestamp", "parentId"}``. Kept:

- ``session.start`` / ``session.resume``: the session id, cwd and branch (no turn);
- ``session.title_changed``: the session's title;
- ``user.message``: the prompt as the user typed it (``data.content``; never ``transformedContent``,
  which holds the ``<system_reminder>`` hook context injected into it);
- ``assistant.message``: its text and one tool line per ``toolRequests`` entry: ``view`` records its
  file as read; ``edit``, ``create``, ``str_replace_editor`` (but its ``view``) and ``apply_patch`` as modified;
- ``tool.execution_complete``: one result line (the hooks' "Additional guidance" appended to the
  output cut off), as a user turn; its ``fileEdits`` are recorded as modified;
- ``session.compaction_complete``: the summary, as a ``compact_summary`` turn.

Skipped: ``hook.*``, ``system.message``, turn and usage events, a subagent's events (``agentId`` or
``parentToolCallId``), and prompts a skill or another agent injected (``source``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from autology_mcp.sessions.turns import Dialect, TITLE_MAX, Turn, one_line, strip_injected, tool_target
from autology_mcp.sessions.transcript_codex import patch_files

READ_TOOLS = frozenset({"view"})
EDIT_TOOLS = frozenset({"edit", "create", "str_replace_editor", "apply_patch"})
_GUIDANCE = re.compile(r"\s*Tool \"[^\"\n]*\" \w+\. Additional guidance from \w+ hooks:.*\Z", re.DOTALL)


class CopilotDialect(Dialect):
    def entry(self, entry: dict[str, Any]) -> list[Turn]:
        state = self.state
        kind = entry.get("type")
        data = entry.get("data")
        if not isinstance(data, dict):
            state.skipped += 1
            return []
        timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else ""
        if kind in ("session.start", "session.resume"):
            if isinstance(data.get("sessionId"), str) and not state.session_id:
                state.session_id = data["sessionId"]
            context = data.get("context") if isinstance(data.get("context"), dict) else {}
            if isinstance(context.get("cwd"), str) and not state.cwd:
                state.cwd = context["cwd"]
            if isinstance(context.get("branch"), str) and context["branch"]:
                state.git_branch = context["branch"]
            return []
        if kind == "session.title_changed":
            if isinstance(data.get("title"), str) and data["title"].strip():
                state.summary_title = one_line(data["title"], TITLE_MAX)
            return []
        if isinstance(entry.get("agentId"), str) or data.get("parentToolCallId"):
            state.skipped += 1  # a subagent's conversation
            return []
        if kind == "user.message":
            return self._user(data, timestamp)
        if kind == "assistant.message":
            return self._assistant(data, timestamp)
        if kind == "tool.execution_complete":
            return self._result(data, timestamp)
        if kind == "session.compaction_complete" and data.get("success") is True \
                and isinstance(data.get("summaryContent"), str):
            state.compactions += 1
            return self.parser.turn("compact_summary", strip_injected(data["summaryContent"]), timestamp)
        state.skipped += 1
        return []

    def _user(self, data: dict[str, Any], timestamp: str) -> list[Turn]:
        source = data.get("source")
        if isinstance(source, str) and source.startswith(("skill-", "agent-")):
            self.state.skipped += 1  # injected by a skill or another agent, not typed
            return []
        text = strip_injected(data["content"]) if isinstance(data.get("content"), str) else ""
        self.parser.note_prompt(text)
        return self.parser.turn("user", text, timestamp)

    def _assistant(self, data: dict[str, Any], timestamp: str) -> list[Turn]:
        lines = [strip_injected(data["content"])] if isinstance(data.get("content"), str) else []
        requests = data.get("toolRequests") if isinstance(data.get("toolRequests"), list) else []
        lines += [self._tool_call(r) for r in requests if isinstance(r, dict)]
        return self.parser.turn("assistant", "\n".join(line for line in lines if line), timestamp)

    def _tool_call(self, request: dict[str, Any]) -> str:
        parser = self.parser
        name = request.get("name") if isinstance(request.get("name"), str) else "tool"
        args = request.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                args = {"input": args}
        args = args if isinstance(args, dict) else {}
        call_id = request.get("toolCallId")
        patch = args.get("input") or args.get("patch")
        if name == "apply_patch" and isinstance(patch, str):
            return parser.tool_call(name, call_id, "", [parser.absolute(f) for f in patch_files(patch)], "modified")
        kind = "read" if name in READ_TOOLS else "modified" if name in EDIT_TOOLS else None
        if name == "str_replace_editor" and args.get("command") == "view":
            kind = "read"
        path = args.get("path") if isinstance(args.get("path"), str) and args.get("path") else ""
        paths = [parser.absolute(path)] if path and kind else []
        return parser.tool_call(name, call_id, tool_target(name, args), paths, kind)

    def _result(self, data: dict[str, Any], timestamp: str) -> list[Turn]:
        result = data.get("result") if isinstance(data.get("result"), dict) else {}
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        output = result.get("content") if isinstance(result.get("content"), str) else ""
        if not output and isinstance(error.get("message"), str):
            output = error["message"]
        output = strip_injected(_GUIDANCE.sub("", output))
        for edit in data.get("fileEdits") if isinstance(data.get("fileEdits"), list) else []:
            if isinstance(edit, dict) and isinstance(edit.get("path"), str) and edit["path"]:
                self.parser.record_files([self.parser.absolute(edit["path"])], "modified")
        line = self.parser.tool_result(str(data.get("toolCallId", "")), output, data.get("success") is False)
        return self.parser.turn("user", line, timestamp)
