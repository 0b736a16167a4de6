"""Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl``) into turns.

Every line is ``{"timestamp", "type", "payload"}`` (0.171.0 adds ``ordinal``). Kept:

- ``session_meta``: the session id and cwd (no turn);
- ``response_item`` ``message``: role ``user`` (a prompt; the blocks Codex injects, ``# AGENTS.md
  instructions…``, ``<environment_context>``, ``<user_instructions>`` and a Stop hook's
  ``<hook_prompt>``, are dropped) and role ``assistant`` (its ``output_text``). Role ``developer``
  (instructions, hook context) is skipped;
- ``function_call`` / ``custom_tool_call`` / ``local_shell_call``: one tool line. ``apply_patch``
  records the files of its ``*** Update/Add/Delete File:`` and ``*** Move to:`` headers as modified;
  a plain read command (``cat``, ``head``, ``tail``, ``nl``, ``sed -n``) records its files as read;
- ``*_output``: one result line (``error`` when the exit code is not 0), as a user turn;
- ``compacted``: the summary that replaced the history, as a ``compact_summary`` turn;
- ``event_msg`` ``item_completed`` of a command: the files Codex itself parsed as read
  (``parsed_cmd``); every other event (token counts, task start/end, the copies of the messages) is skipped.

``turn_context``, ``world_state``, ``token_usage_record`` and reasoning items are skipped.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from autology_mcp.sessions.turns import Dialect, TARGET_MAX, Turn, one_line, strip_injected, tool_target

INJECTED_PREFIXES = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>", "<hook_prompt",
                     "<INSTRUCTIONS>")
COMPACT_PREFIX = "Another language model started to solve this problem"
PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Update|Add|Delete) File|Move to): (.+?)\s*$", re.MULTILINE)
EXIT_CODE = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)\s*$", re.MULTILINE)
READERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "bat"})
SHELL_SYNTAX = re.compile(r"[|;&<>`$(){}*?\n]")


def patch_files(patch: str) -> list[str]:
    """The files an ``apply_patch`` envelope touches, in order."""
    return list(dict.fromkeys(m.group(1) for m in PATCH_FILE.finditer(patch)))


def read_files(command: str) -> list[str]:
    """The files a plain read command names (``cat a b``, ``sed -n 1,80p a``, ``head -n 20 a``); none for
    anything with shell syntax (pipes, redirections, substitutions, globs)."""
    if SHELL_SYNTAX.search(command):
        return []
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if not words or not (words[0] in READERS or (words[0] == "sed" and "-n" in words)):
        return []
    args, skip = [], False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in ("-n", "-c") and words[0] in ("head", "tail"):
            skip = True  # its count
        elif not word.startswith("-") and not word.isdigit():
            args.append(word)
    return args[1:] if words[0] == "sed" else args  # sed's first argument is its script


def _shell_text(command: Any) -> str:
    """A command given as a string, or as argv (``["bash", "-lc", "cat x"]``: the script)."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) >= 3 and command[-2] in ("-lc", "-c"):
            return command[-1]
        return " ".join(command)
    return ""


def _output_text(output: Any) -> tuple[str, bool]:
    """A tool output's text and whether it failed: a string (``Exit code: N`` / ``Process exited with
    code N`` lines, then ``Output:``), or a JSON string or object ``{"output", "metadata": {"exit_code"}}``."""
    if isinstance(output, str) and output.startswith("{"):
        try:
            output = json.loads(output)
        except ValueError:
            pass
    if isinstance(output, dict):
        meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
        code = meta.get("exit_code")
        text = output.get("output") if isinstance(output.get("output"), str) else ""
        return text, (isinstance(code, int) and code != 0) or output.get("success") is False
    if not isinstance(output, str):
        return "", False
    code = EXIT_CODE.search(output)
    failed = code is not None and int(code.group(1)) != 0
    head, marker, body = output.partition("\nOutput:\n")
    if marker and (code or head.startswith(("Chunk ID:", "Exit code:", "Wall time:"))):
        return body, failed
    return output, failed


class CodexDialect(Dialect):
    def entry(self, entry: dict[str, Any]) -> list[Turn]:
        state = self.state
        kind = entry.get("type")
        payload = entry.get("payload")
        timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else ""
        if not isinstance(payload, dict):
            state.skipped += 1
            return []
        if kind == "session_meta":
            if isinstance(payload.get("id"), str) and not state.session_id:
                state.session_id = payload["id"]
            if isinstance(payload.get("cwd"), str) and not state.cwd:
                state.cwd = payload["cwd"]
            git = payload.get("git")
            if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
                state.git_branch = git["branch"]
            return []
        if kind == "compacted":
            message = payload.get("message")
            if not isinstance(message, str) or not message.strip():
                state.skipped += 1
                return []
            state.compactions += 1
            if message.startswith(COMPACT_PREFIX) and "\n" in message:
                message = message.split("\n", 1)[1]  # Codex's preamble: the summary follows it
            return self.parser.turn("compact_summary", message.strip(), timestamp)
        if kind == "event_msg":
            self._event(payload)
            return []
        if kind != "response_item":
            state.skipped += 1
            return []
        item = payload.get("type")
        if item == "message":
            return self._message(payload, timestamp)
        if item in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            return self.parser.turn("assistant", self._tool_call(payload), timestamp)
        if item in ("function_call_output", "custom_tool_call_output"):
            text, failed = _output_text(payload.get("output"))
            line = self.parser.tool_result(str(payload.get("call_id", "")), text, failed)
            return self.parser.turn("user", line, timestamp)
        state.skipped += 1  # reasoning, and what else Codex may add
        return []

    def _message(self, payload: dict[str, Any], timestamp: str) -> list[Turn]:
        role = payload.get("role")
        content = payload.get("content")
        if role not in ("user", "assistant") or not isinstance(content, list):
            self.state.skipped += 1  # developer / system: instructions and hook context
            return []
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") in ("input_text", "output_text", "text") and isinstance(block.get("text"), str):
                text = block["text"].strip()
                if role == "user" and text.startswith(INJECTED_PREFIXES):
                    continue
                text = strip_injected(text)
                if text:
                    parts.append(text)
            elif block.get("type") == "input_image" and role == "user":
                parts.append("[image]")
        text = "\n".join(parts).strip()
        if role == "user":
            if text.startswith(COMPACT_PREFIX):
                self.state.skipped += 1  # the compacted summary handed back: its `compacted` line was kept
                return []
            self.parser.note_prompt(text)
        return self.parser.turn(role, text, timestamp)

    def _tool_call(self, payload: dict[str, Any]) -> str:
        parser = self.parser
        name = payload.get("name") if isinstance(payload.get("name"), str) else payload.get("type", "tool")
        call_id = payload.get("call_id")
        if payload.get("type") == "custom_tool_call":
            raw = payload.get("input")
            args: Any = {"input": raw} if isinstance(raw, str) else {}
        elif payload.get("type") == "local_shell_call":
            action = payload.get("action")
            args = {"command": action.get("command")} if isinstance(action, dict) else {}
        elif payload.get("type") == "web_search_call":
            action = payload.get("action")
            name, args = "web_search", (action if isinstance(action, dict) else {})
        else:
            try:
                args = json.loads(payload.get("arguments") or "{}")
            except (TypeError, ValueError):
                args = {}
        if not isinstance(args, dict):
            args = {}
        patch = args.get("input") if isinstance(args.get("input"), str) else args.get("patch")
        command = _shell_text(args.get("cmd") or args.get("command"))
        workdir = parser.absolute(args["workdir"]) if isinstance(args.get("workdir"), str) else ""
        if isinstance(patch, str) and "*** Begin Patch" in patch:
            files = [parser.absolute(f, workdir) for f in patch_files(patch)]
            return parser.tool_call(name, call_id, "", files, "modified")
        if command:
            if "*** Begin Patch" in command:  # apply_patch run through the shell
                files = [parser.absolute(f, workdir) for f in patch_files(command)]
                return parser.tool_call(name, call_id, "", files, "modified")
            parser.record_files([parser.absolute(f, workdir) for f in read_files(command)], "read")
            return parser.tool_call(name, call_id, one_line(command, TARGET_MAX))
        return parser.tool_call(name, call_id, tool_target(name, args))

    def _event(self, payload: dict[str, Any]) -> None:
        """Only the files a command read, as Codex parsed them; every other event is skipped."""
        item = payload.get("item") if payload.get("type") == "item_completed" else payload
        if not isinstance(item, dict) or not isinstance(item.get("parsed_cmd"), list):
            self.state.skipped += 1
            return
        cwd = item.get("cwd") if isinstance(item.get("cwd"), str) else ""
        cwd = cwd.removeprefix("file://")
        files = []
        for parsed in item["parsed_cmd"]:
            if isinstance(parsed, dict) and parsed.get("type") == "read":
                path = parsed.get("path") or parsed.get("name")
                if isinstance(path, str) and path:
                    files.append(self.parser.absolute(path, cwd))
        self.parser.record_files(files, "read")
