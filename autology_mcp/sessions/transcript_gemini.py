"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``) into turns.

A header line ``{"sessionId", "projectHash", "startTime", …}``, then records ``{"id", "timestamp", "type",
"content", …}`` and ``{"$set": {…}}`` / ``{"$rewindTo": id}`` patch lines. Kept:

- the header: the session id (and a ``summary``, the title Gemini wrote, from the header or a ``$set``);
- ``type: "user"``: a prompt (its text parts), or the results of tool calls (``functionResponse`` parts),
  each one result line, as Claude Code's tool results. A ``<state_snapshot>`` (the summary a
  compression put in place of the history) becomes a ``compact_summary`` turn;
- ``type: "gemini"``: its text (thoughts skipped) and one tool line per ``toolCalls`` entry.
  ``read_file`` records its file as read, ``write_file``/``replace``/``edit`` as modified.

Gemini writes a record again under the same id as it grows (without, then with its ``toolCalls``,
then with their status): each text and each tool call is emitted once (``ParseState.seen``).
Every ``<hook_context>…</hook_context>`` is cut out: hooks' context (autology's own) is stored in the
prompts and tool outputs, and is never read back into memory. Skipped: the ``$set`` lines (their
``<session_context>`` message gives the cwd), rewinds, and ``info``/``error``/``warning`` records.
"""

from __future__ import annotations

import re
from typing import Any

from autology_mcp.sessions.turns import Dialect, TITLE_MAX, Turn, one_line, strip_injected, tool_target

READ_TOOLS = frozenset({"read_file"})
EDIT_TOOLS = frozenset({"write_file", "replace", "edit"})
SNAPSHOT = "<state_snapshot>"
SNAPSHOT_REPLY = "Got it. Thanks for the additional context!"  # the model turn a compression adds
_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\s*\n\s*-\s*(/[^\n]*)|working in the directory: (/[^\n]*)")


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


class GeminiDialect(Dialect):
    def entry(self, entry: dict[str, Any]) -> list[Turn]:
        state = self.state
        if isinstance(entry.get("$set"), dict):
            self._metadata(entry["$set"])
            return []
        if isinstance(entry.get("projectHash"), str) and "type" not in entry:  # the header
            if isinstance(entry.get("sessionId"), str) and not state.session_id:
                state.session_id = entry["sessionId"]
            self._metadata(entry)
            return []
        kind = entry.get("type")
        record_id = entry.get("id")
        if kind not in ("user", "gemini") or not isinstance(record_id, str):
            state.skipped += 1  # $rewindTo, info / error / warning records, other formats' lines
            return []
        timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else ""
        if kind == "user":
            return self._user(record_id, entry.get("content"), timestamp)
        return self._gemini(record_id, entry, timestamp)

    def _metadata(self, values: dict[str, Any]) -> None:
        state = self.state
        if isinstance(values.get("summary"), str) and values["summary"].strip():
            state.summary_title = one_line(values["summary"], TITLE_MAX)
        directories = values.get("directories")
        if not state.cwd and isinstance(directories, list) and directories and isinstance(directories[0], str):
            state.cwd = directories[0]
        for message in values.get("messages") or []:  # the <session_context> message names the workspace
            for part in _parts(message.get("content")) if isinstance(message, dict) else []:
                text = part.get("text")
                found = _WORKSPACE.search(text) if isinstance(text, str) and not state.cwd else None
                if found:
                    state.cwd = (found.group(1) or found.group(2)).strip()

    def _user(self, record_id: str, content: Any, timestamp: str) -> list[Turn]:
        if self.parser.seen_before(f"u:{record_id}"):
            self.state.skipped += 1
            return []
        prompt_parts: list[str] = []
        results: list[str] = []
        for part in _parts(content):
            if isinstance(part.get("functionResponse"), dict):
                results.append(self._result(part["functionResponse"]))
            elif isinstance(part.get("text"), str) and part.get("thought") is not True:
                text = strip_injected(part["text"])
                if text.startswith("<session_context>"):
                    continue
                if SNAPSHOT in text:
                    self.state.compactions += 1
                    return self.parser.turn("compact_summary", text, timestamp)
                if text:
                    prompt_parts.append(text)
        prompt = "\n".join(prompt_parts).strip()
        self.parser.note_prompt(prompt)
        return self.parser.turn("user", "\n".join(([prompt] if prompt else []) + results).strip(), timestamp)

    def _result(self, response: dict[str, Any]) -> str:
        name = response.get("name") if isinstance(response.get("name"), str) else "tool"
        body = response.get("response") if isinstance(response.get("response"), dict) else {}
        error = body.get("error")
        output = error if isinstance(error, str) and error else body.get("output")
        output = strip_injected(output) if isinstance(output, str) else ""
        return self.parser.tool_result(str(response.get("id", "")), output, bool(error), name)

    def _gemini(self, record_id: str, entry: dict[str, Any], timestamp: str) -> list[Turn]:
        lines: list[str] = []
        text = "\n".join(
            strip_injected(p["text"]) for p in _parts(entry.get("content"))
            if isinstance(p.get("text"), str) and p.get("thought") is not True
        ).strip()
        if text and text != SNAPSHOT_REPLY and not self.parser.seen_before(f"g:{record_id}"):
            lines.append(text)
        calls = entry.get("toolCalls") if isinstance(entry.get("toolCalls"), list) else []
        for i, call in enumerate(calls):
            if not isinstance(call, dict):
                continue
            call_id = call.get("id") if isinstance(call.get("id"), str) else ""
            if self.parser.seen_before(f"t:{record_id}:{call_id or i}"):
                continue
            lines.append(self._tool_call(call, call_id))
        if not lines:
            self.state.skipped += 1  # the same record again, nothing new in it
            return []
        return self.parser.turn("assistant", "\n".join(lines), timestamp)

    def _tool_call(self, call: dict[str, Any], call_id: str) -> str:
        name = call.get("name") if isinstance(call.get("name"), str) else "tool"
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        path = next((args[k] for k in ("file_path", "absolute_path", "path") if isinstance(args.get(k), str)), "")
        kind = "read" if name in READ_TOOLS else "modified" if name in EDIT_TOOLS else None
        paths = [self.parser.absolute(path)] if path and kind else []
        return self.parser.tool_call(name, call_id or None, tool_target(name, args), paths, kind)
