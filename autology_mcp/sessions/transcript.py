"""Parse a coding agent's transcript into turns: Claude Code's here, the other agents' in their own modules.

The first line that belongs to a known format decides the dialect (``ParseState.agent``): Claude Code
(this module), Codex CLI (:mod:`~autology_mcp.sessions.transcript_codex`), Gemini CLI
(:mod:`~autology_mcp.sessions.transcript_gemini`) or GitHub Copilot CLI
(:mod:`~autology_mcp.sessions.transcript_copilot`). The state keeps it, so an incremental ingest goes on
in the same dialect; every dialect emits the same turns (:class:`Turn`), tool lines and result lines, redacted
the same way. Lines before the first recognisable one are read as Claude Code's.

Claude Code (``~/.claude/projects/<project>/<session>.jsonl``):

Each line of a transcript is one JSON object. The ones that carry the conversation:

- ``{"type": "user", "message": {"role": "user", "content": "..." | [blocks]}}``: a prompt (string
  content or ``text`` blocks), or the results of tool calls (``tool_result`` blocks);
- ``{"type": "assistant", "message": {"content": [{"type": "text"}, {"type": "tool_use"}, ...]}}``;
- ``{"type": "summary", "summary": "...", "leafUuid": "..."}``: a title Claude Code wrote;
- ``{"type": "custom-title", "customTitle": "..."}``: a title the user gave (``/rename``);
- ``{"type": "system", "subtype": "compact_boundary"}`` followed by a user entry with
  ``isCompactSummary: true``: the summary that replaced the history at a compaction.

Everything else (attachments, queue operations, hook output, meta and local-command entries,
sidechains, API error messages, thinking blocks, images) is skipped. A tool call becomes one short
line (name, target); its result one line (outcome and the first line of output), never the full
output, except a subagent's (``Task``/``Agent``) report, which is prose: up to 2,000 characters of it. A line that is
not JSON, or not an object, is counted in ``malformed`` and skipped: a transcript never fails to parse.
Everything the parser emits (turn text, titles, tool targets, file paths) is already redacted.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from autology_mcp.common.redact import redact
from autology_mcp.sessions.turns import (  # noqa: F401 - also this module's names, as before
    AGENTS,
    CLAUDE,
    CODEX,
    COPILOT,
    GEMINI,
    ONE_LINE_WINDOW,
    RESULT_LINE_MAX,
    ROLES,
    SEEN_MAX,
    TARGET_MAX,
    TITLE_MAX,
    ParseState,
    Turn,
    one_line,
    strip_injected,
    tool_target,
)

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read"})
REPORT_TOOLS = frozenset({"Task", "Agent"})  # subagents: their result is their written report
REPORT_MAX = 2000
_TAG = re.compile(r"<(?P<name>command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
                  r"local-command-caveat|system-reminder)>(?P<body>.*?)</(?P=name)>", re.DOTALL)
_SPACES = re.compile(r"[ \t]+")
COMPACT_PREFIX = "This session is being continued from a previous conversation"

_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state",
                          "token_usage_record"})
_DOTTED = re.compile(r"^[a-z_]+\.[a-z_.]+$")  # Copilot's event types: "user.message", "tool.execution_complete"
def detect_agent(entry: dict[str, Any]) -> str:
    """The agent whose transcript format this line is in ("" when it does not tell)."""
    kind = entry.get("type") if isinstance(entry.get("type"), str) else None
    if kind in _CODEX_TYPES and isinstance(entry.get("payload"), dict):
        return CODEX
    if kind and _DOTTED.match(kind) and isinstance(entry.get("data"), dict):
        return COPILOT
    if (isinstance(entry.get("projectHash"), str) and isinstance(entry.get("sessionId"), str)) or kind == "gemini" \
            or "$set" in entry or "$rewindTo" in entry \
            or (kind == "user" and "message" not in entry and "content" in entry and isinstance(entry.get("id"), str)):
        return GEMINI
    if (kind in ("user", "assistant") and "message" in entry) or kind in ("summary", "custom-title") \
            or (kind == "system" and "uuid" in entry):
        return CLAUDE
    return ""


def _clean_text(text: str) -> str:
    """Prompt text without Claude Code's wrapper tags; a slash command becomes ``/name args``."""
    if "<" not in text:
        return text.strip()
    name = args = ""
    kept: list[str] = []
    last = 0
    for match in _TAG.finditer(text):
        kept.append(text[last : match.start()])
        last = match.end()
        if match.group("name") == "command-name":
            name = match.group("body").strip()
        elif match.group("name") == "command-args":
            args = match.group("body").strip()
    kept.append(text[last:])
    rest = "".join(kept).strip()
    command = f"{name} {args}".strip()
    return "\n".join(part for part in (command, rest) if part)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append("[image]")
        return "\n".join(parts)
    return ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return one_line(line, RESULT_LINE_MAX)
    return ""


class TranscriptParser:
    """Feed it lines (in order); it emits turns and keeps :class:`ParseState` for the next run."""

    def __init__(self, state: ParseState | None = None, cwd: str = ""):
        self.state = state or ParseState()
        self.root_cwd = cwd  # paths under it are recorded relative to it
        self._dialect: Any = None  # the other agents' entry reader, once the state names one

    def feed(self, line: str) -> list[Turn]:
        line = line.strip()
        if not line:
            return []
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            self.state.malformed += 1
            return []
        if not isinstance(entry, dict):
            self.state.malformed += 1
            return []
        if not self.state.agent:
            self.state.agent = detect_agent(entry)
        try:
            if self.state.agent in ("", CLAUDE):
                return self._entry(entry)
            return self._other_dialect().entry(entry)
        except (TypeError, AttributeError, KeyError, ValueError, IndexError):  # an object of an unexpected shape
            self.state.malformed += 1
            return []

    def _other_dialect(self) -> Any:
        if self._dialect is None:
            if self.state.agent == CODEX:
                from autology_mcp.sessions.transcript_codex import CodexDialect as dialect
            elif self.state.agent == GEMINI:
                from autology_mcp.sessions.transcript_gemini import GeminiDialect as dialect
            elif self.state.agent == COPILOT:
                from autology_mcp.sessions.transcript_copilot import CopilotDialect as dialect
            else:
                raise ValueError(f"unknown transcript dialect {self.state.agent!r}")
            self._dialect = dialect(self)
        return self._dialect

    # ------------------------------------------------------------------ entries

    def _entry(self, entry: dict[str, Any]) -> list[Turn]:
        state = self.state
        kind = entry.get("type")
        if isinstance(entry.get("sessionId"), str) and not state.session_id:
            state.session_id = entry["sessionId"]
        if kind == "summary":
            if isinstance(entry.get("summary"), str) and entry["summary"].strip():
                state.summary_title = one_line(entry["summary"], TITLE_MAX)
            return []
        if kind == "custom-title":
            if isinstance(entry.get("customTitle"), str) and entry["customTitle"].strip():
                state.custom_title = one_line(entry["customTitle"], TITLE_MAX)
            return []
        if kind == "system":
            if entry.get("subtype") == "compact_boundary":
                state.compactions += 1
            return []
        if kind not in ("user", "assistant"):
            state.skipped += 1
            return []
        if entry.get("isSidechain") is True or entry.get("isApiErrorMessage") is True:
            state.skipped += 1
            return []
        message = entry.get("message")
        if not isinstance(message, dict):
            state.malformed += 1
            return []
        timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else ""
        if isinstance(entry.get("cwd"), str) and not state.cwd:
            state.cwd = entry["cwd"]
        if isinstance(entry.get("gitBranch"), str) and entry["gitBranch"]:
            state.git_branch = entry["gitBranch"]
        content = message.get("content")
        if kind == "user":
            if entry.get("isCompactSummary") is True or (
                isinstance(content, str) and content.startswith(COMPACT_PREFIX)
            ):
                text = _result_text(content) if not isinstance(content, str) else content
                return self._turn("compact_summary", text.strip(), timestamp)
            if entry.get("isMeta") is True:
                state.skipped += 1
                return []
            return self._user(content, timestamp)
        if message.get("model") == "<synthetic>":
            state.skipped += 1
            return []
        return self._assistant(content, timestamp)

    def _turn(self, role: str, text: str, timestamp: str) -> list[Turn]:
        if not text:
            self.state.skipped += 1
            return []
        turn = Turn(self.state.turns, role, redact(text), timestamp)
        if timestamp:
            self.state.first_timestamp = self.state.first_timestamp or timestamp
            self.state.last_timestamp = max(self.state.last_timestamp, timestamp)
        self.state.turns += 1
        return [turn]

    def _user(self, content: Any, timestamp: str) -> list[Turn]:
        lines: list[str] = []
        prompt_parts: list[str] = []
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.state.malformed += 1
            return []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                text = _clean_text(block["text"])
                if text:
                    prompt_parts.append(text)
            elif block.get("type") == "tool_result":
                lines.append(self._tool_result(block))
        prompt = "\n".join(prompt_parts).strip()
        self.note_prompt(prompt)
        text = "\n".join(([prompt] if prompt else []) + lines).strip()
        return self._turn("user", text, timestamp)

    def _tool_result(self, block: dict[str, Any]) -> str:
        return self.tool_result(str(block.get("tool_use_id", "")), _result_text(block.get("content")),
                                block.get("is_error") is True)

    def _assistant(self, content: Any, timestamp: str) -> list[Turn]:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.state.malformed += 1
            return []
        parts: list[str] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                parts.append(block["text"].strip())
            elif block.get("type") == "tool_use":
                parts.append(self._tool_use(block))
        return self._turn("assistant", "\n".join(parts).strip(), timestamp)

    def _tool_use(self, block: dict[str, Any]) -> str:
        name = block.get("name") if isinstance(block.get("name"), str) else "tool"
        data = block.get("input")
        path = data.get("file_path") or data.get("notebook_path") if isinstance(data, dict) else None
        kind = "modified" if name in EDIT_TOOLS else "read" if name in READ_TOOLS else None
        return self.tool_call(name, block.get("id"), tool_target(name, data),
                              [path] if isinstance(path, str) and path else [], kind)

    # ------------------------------------------------------------------ shared by every dialect

    def turn(self, role: str, text: str, timestamp: str) -> list[Turn]:
        """The next turn (redacted), or nothing when ``text`` is empty."""
        return self._turn(role, text, timestamp)

    def note_prompt(self, prompt: str) -> None:
        """The session's first prompt (a slash command aside) is its title until it gets another."""
        if prompt and not self.state.first_prompt and not prompt.startswith("/"):
            self.state.first_prompt = one_line(prompt, TITLE_MAX)

    def tool_call(self, name: str, call_id: Any, target: str = "", paths: list[str] | tuple[str, ...] = (),
                  kind: str | None = None) -> str:
        """``[tool Name target]``: counted, its files (``paths``) recorded as ``kind`` ("read" or
        "modified", relative to the project), and remembered by ``call_id`` until its result comes."""
        state = self.state
        state.tool_counts[name] = state.tool_counts.get(name, 0) + 1
        shown = self.record_files(paths, kind)
        if shown:
            target = one_line(", ".join(shown), TARGET_MAX)
        label = f"{name} {target}".strip()
        if isinstance(call_id, str):
            state.pending_tools[call_id] = one_line(label, 80)
            if len(state.pending_tools) > 200:  # results that never came: keep the state small
                state.pending_tools.pop(next(iter(state.pending_tools)))
        return f"[tool {label}]"

    def record_files(self, paths: list[str] | tuple[str, ...], kind: str | None) -> list[str]:
        """``paths`` relative to the project, each recorded once as ``kind`` ("read", "modified" or None)."""
        state = self.state
        bucket = state.files_modified if kind == "modified" else state.files_read if kind == "read" else None
        relative = []
        for raw in paths:
            path = self._relative(raw)
            if bucket is not None and path not in bucket:
                bucket.append(path)
            relative.append(path)
        return relative

    def tool_result(self, call_id: str, output: str, error: bool, name: str = "tool") -> str:
        """``[result Name target: ok — first line]`` (a subagent's report: its prose, cut)."""
        name = self.state.pending_tools.pop(call_id, name)
        outcome = "error" if error else "ok"
        if name.split(" ", 1)[0] in REPORT_TOOLS and outcome == "ok":
            report = one_line(output, REPORT_MAX)  # a subagent's report is prose worth keeping, not raw output
            return f"[result {name}: ok]\n{report}" if report else f"[result {name}: ok]"
        first = _first_line(output)
        return f"[result {name}: {outcome}{' — ' + first if first else ''}]"

    def seen_before(self, key: str) -> bool:
        """Whether ``key`` was emitted already; remembers it (the last SEEN_MAX keys)."""
        if key in self.state.seen:
            return True
        self.state.seen.append(key)
        del self.state.seen[:-SEEN_MAX]
        return False

    def absolute(self, path: str, base: str = "") -> str:
        """A path the agent named, made absolute against ``base`` (or the session's cwd) and normalised."""
        base = base or self.state.cwd
        if not path.startswith("/") and base.startswith("/"):
            path = os.path.join(base, path)
        return os.path.normpath(path) if path.startswith("/") else path

    def _relative(self, path: str) -> str:
        for base in (self.root_cwd, self.state.cwd):
            base = base.rstrip("/")
            if base and path.startswith(base + "/"):
                return path[len(base) + 1 :]
        return redact(path)


def parse_lines(lines: list[str], state: ParseState | None = None, cwd: str = "") -> tuple[list[Turn], ParseState]:
    """All turns of these lines, and the state after them."""
    parser = TranscriptParser(state, cwd)
    turns: list[Turn] = []
    for line in lines:
        turns.extend(parser.feed(line))
    return turns, parser.state
