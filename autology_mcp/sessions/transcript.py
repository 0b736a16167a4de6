"""Parse a Claude Code transcript (``~/.claude/projects/<project>/<session>.jsonl``) into turns.

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
import re
from dataclasses import dataclass, field
from typing import Any

from autology_mcp.sessions.redact import redact

ROLES = ("user", "assistant", "compact_summary")
TARGET_MAX = 160
RESULT_LINE_MAX = 160
TITLE_MAX = 120
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read"})
REPORT_TOOLS = frozenset({"Task", "Agent"})  # subagents: their result is their written report
REPORT_MAX = 2000
_TAG = re.compile(r"<(?P<name>command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
                  r"local-command-caveat|system-reminder)>(?P<body>.*?)</(?P=name)>", re.DOTALL)
_SPACES = re.compile(r"[ \t]+")
COMPACT_PREFIX = "This session is being continued from a previous conversation"


@dataclass(frozen=True)
class Turn:
    """One kept entry of the conversation, already summarised (tool calls as short lines)."""

    n: int  # its index among the kept turns of the transcript (stable across incremental ingests)
    role: str  # "user" | "assistant" | "compact_summary"
    text: str
    timestamp: str


@dataclass
class ParseState:
    """What parsing carries from one part of a transcript to the next (for incremental ingest)."""

    turns: int = 0  # turns emitted so far
    malformed: int = 0
    skipped: int = 0
    summary_title: str = ""
    custom_title: str = ""
    first_prompt: str = ""
    session_id: str = ""
    cwd: str = ""
    git_branch: str = ""
    first_timestamp: str = ""
    last_timestamp: str = ""
    compactions: int = 0
    files_modified: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    tool_counts: dict[str, int] = field(default_factory=dict)
    pending_tools: dict[str, str] = field(default_factory=dict)  # tool_use id -> "Name target", until its result

    def title(self) -> str:
        """The session title: the user's own title, else the summary line, else the first prompt."""
        return self.custom_title or self.summary_title or self.first_prompt or "Untitled session"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParseState:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        state = cls(**known)
        state.files_modified = list(state.files_modified)
        state.files_read = list(state.files_read)
        state.tool_counts = dict(state.tool_counts)
        state.pending_tools = dict(state.pending_tools)
        return state


ONE_LINE_WINDOW = 8192


def one_line(text: str, limit: int) -> str:
    """Redacted, whitespace collapsed to single spaces, cut to ``limit`` characters with an ellipsis.

    Redaction comes first: cutting first could leave half a secret that no pattern recognises. Only a
    window of ``limit`` + 8 KB is redacted (a 200 KB line of minified code is not scanned whole for a
    one-line summary); a one-line secret would need to be over 8 KB long to straddle its end.
    """
    flat = " ".join(redact(str(text)[: limit + ONE_LINE_WINDOW]).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


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


def _tool_target(name: str, data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    for key in ("file_path", "notebook_path", "path", "command", "pattern", "url", "query", "description", "prompt"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value, TARGET_MAX)
    return ""


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
        try:
            return self._entry(entry)
        except (TypeError, AttributeError, KeyError, ValueError):  # an object of an unexpected shape
            self.state.malformed += 1
            return []

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
        if prompt and not self.state.first_prompt and not prompt.startswith("/"):
            self.state.first_prompt = one_line(prompt, TITLE_MAX)
        text = "\n".join(([prompt] if prompt else []) + lines).strip()
        return self._turn("user", text, timestamp)

    def _tool_result(self, block: dict[str, Any]) -> str:
        name = self.state.pending_tools.pop(str(block.get("tool_use_id", "")), "tool")
        output = _result_text(block.get("content"))
        outcome = "error" if block.get("is_error") is True else "ok"
        if name.split(" ", 1)[0] in REPORT_TOOLS and outcome == "ok":
            report = one_line(output, REPORT_MAX)  # a subagent's report is prose worth keeping, not raw output
            return f"[result {name}: ok]\n{report}" if report else f"[result {name}: ok]"
        first = _first_line(output)
        return f"[result {name}: {outcome}{' — ' + first if first else ''}]"

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
        state = self.state
        name = block.get("name") if isinstance(block.get("name"), str) else "tool"
        data = block.get("input")
        target = _tool_target(name, data)
        state.tool_counts[name] = state.tool_counts.get(name, 0) + 1
        path = data.get("file_path") or data.get("notebook_path") if isinstance(data, dict) else None
        if isinstance(path, str) and path:
            path = self._relative(path)
            bucket = state.files_modified if name in EDIT_TOOLS else state.files_read if name in READ_TOOLS else None
            if bucket is not None and path not in bucket:
                bucket.append(path)
            target = one_line(path, TARGET_MAX)
        label = f"{name} {target}".strip()
        if isinstance(block.get("id"), str):
            state.pending_tools[block["id"]] = one_line(label, 80)
            if len(state.pending_tools) > 200:  # results that never came: keep the state small
                state.pending_tools.pop(next(iter(state.pending_tools)))
        return f"[tool {label}]"

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
