"""Session memory from Codex CLI, Gemini CLI and Copilot CLI transcripts (issue 30).

The transcripts are built here, line for line in the shape the real CLIs wrote (Codex 0.171.0
rollouts, Gemini CLI 0.61.0 chats, Copilot CLI 1.0.102 events), with hook context planted where each
agent stores it: it must never come back out of session memory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autology_mcp.cli.main import main
from autology_mcp.knowledge.service import Autology
from autology_mcp.sessions.ingest import ingest_transcript, session_id_for
from autology_mcp.sessions.lifecycle import ingest_from_payload
from autology_mcp.sessions.search import search_sessions
from autology_mcp.sessions.session_node import write_session_node
from autology_mcp.sessions.store import load_session, session_file
from autology_mcp.sessions.transcript import ParseState, detect_agent, parse_lines

SECRET = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s00"
HOOK_TEXT = "AUTOLOGY-INJECTED-CONTEXT"  # what autology's own hooks put into the conversation
CODEX_ID = "01a21d12-dfe0-7b53-942d-9420074499d1"
GEMINI_ID = "5606d631-a9d6-4b2e-a99d-2f64a02cffe0"
COPILOT_ID = "3836b533-2964-4873-81d6-6d18e4ea04cf"


@pytest.fixture(autouse=True)
def agent_homes(tmp_path: Path, monkeypatch) -> Path:
    """Every agent's home under tmp_path: nothing of this machine's own sessions is read."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    return tmp_path


def dumps(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def stamp(second: int) -> str:
    return f"2026-11-27T12:55:{second:02d}.000Z"


# ------------------------------------------------------------------------------ Codex


def codex_item(second: int, payload: dict) -> dict:
    return {"timestamp": stamp(second), "ordinal": second, "type": "response_item", "payload": payload}


def codex_message(second: int, role: str, *texts: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return codex_item(second, {"type": "message", "id": f"msg_{second}", "role": role,
                               "content": [{"type": kind, "text": t} for t in texts]})


def codex_event(second: int, payload: dict) -> dict:
    return {"timestamp": stamp(second), "ordinal": second, "type": "event_msg", "payload": payload}


def codex_first_part(cwd: str) -> list[dict]:
    return [
        {"timestamp": stamp(0), "ordinal": 0, "type": "session_meta", "payload": {
            "session_id": CODEX_ID, "id": CODEX_ID, "timestamp": stamp(0), "cwd": cwd, "originator": "codex_exec",
            "cli_version": "0.171.0", "source": "exec", "base_instructions": {"text": "You are a coding agent running in the Codex CLI."}}},
        codex_event(1, {"type": "task_started", "turn_id": "t1", "model_context_window": 258400}),
        codex_message(2, "developer", "<permissions instructions>sandbox: danger-full-access</permissions instructions>"),
        codex_message(3, "user", f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nalways answer in haiku.\n</INSTRUCTIONS>",
                      f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"),
        {"timestamp": stamp(4), "ordinal": 4, "type": "turn_context", "payload": {"turn_id": "t1", "cwd": cwd, "model": "gpt-5.1-codex"}},
        codex_message(5, "developer", f"<hook_context>{HOOK_TEXT} SessionStart</hook_context>"),
        codex_message(6, "user", "Add retry backoff to the payments HTTP client"),
        codex_event(7, {"type": "item_completed", "item": {"type": "UserMessage", "content": [
            {"type": "text", "text": "Add retry backoff to the payments HTTP client"}]}}),
        codex_message(8, "developer", f"{HOOK_TEXT} UserPromptSubmit"),
        codex_item(9, {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "cat src/http/client.py"}),
                       "call_id": "call_1"}),
        codex_event(10, {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": "call_1", "command": ["/bin/bash", "-lc", "cat src/http/client.py"],
            "cwd": f"file://{cwd}", "parsed_cmd": [{"type": "read", "cmd": "cat src/http/client.py", "name": "client.py",
                                                    "path": "src/http/client.py"}],
            "aggregated_output": "import httpx\nclass PaymentsClient: ...\n", "exit_code": 0}}),
        codex_item(11, {"type": "function_call_output", "call_id": "call_1", "output":
                        "Chunk ID: 616d73\nWall time: 0.0014 seconds\nProcess exited with code 0\nOriginal token count: 8\n"
                        "Output:\nimport httpx\nclass PaymentsClient: ...\n"}),
        codex_item(12, {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_2", "input":
                        "*** Begin Patch\n*** Update File: src/http/client.py\n@@\n-    return send()\n+    return retry(send)\n"
                        "*** Add File: src/http/backoff.py\n+def delay(attempt): return 2 ** attempt\n*** End Patch\n"}),
        codex_message(13, "developer", f"{HOOK_TEXT} PostToolUse"),
        codex_item(14, {"type": "custom_tool_call_output", "call_id": "call_2", "output":
                        "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM src/http/client.py\n"
                        "A src/http/backoff.py\n"}),
        codex_item(15, {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "pytest -q tests"}),
                        "call_id": "call_3"}),
        codex_item(16, {"type": "function_call_output", "call_id": "call_3", "output":
                        "Chunk ID: 1\nWall time: 1.2 seconds\nProcess exited with code 1\nOriginal token count: 30\nOutput:\n"
                        "F.. 1 failed\nAssertionError: expected 3 retries\n"}),
        {"timestamp": stamp(17), "ordinal": 17, "type": "token_usage_record", "payload": {"usage": {"input_tokens": 4990}}},
        codex_message(18, "assistant", "We decided to use exponential backoff with full jitter in the payments client."),
        codex_event(19, {"type": "task_complete", "last_agent_message": "We decided…"}),
    ]


def codex_second_part() -> list[dict]:
    return [
        codex_message(30, "user", f"Use my token {SECRET} to open the pull request"),
        {"timestamp": stamp(31), "ordinal": 31, "type": "compacted", "payload": {
            "message": "Another language model started to solve this problem and produced a summary of its thinking "
                       "process. Here is the summary produced by the other language model:\nThe retry backoff lives in "
                       "src/http/backoff.py; one test still fails.", "replacement_history": []}},
        codex_message(32, "developer", f"<hook_context>{HOOK_TEXT} SessionStart compact</hook_context>"),
        codex_message(33, "assistant", "Opened the pull request for the exponential backoff."),
    ]


def codex_transcript(tmp_path: Path, cwd: str) -> Path:
    path = tmp_path / "codex" / "sessions" / "2026" / "11" / "27" / f"rollout-2026-11-27T12-55-05-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(codex_first_part(cwd)))
    return path


def test_codex_rollout_turns_files_and_title(project: Path) -> None:
    turns, state = parse_lines(dumps(codex_first_part(str(project))).splitlines(), cwd=str(project))
    assert state.agent == "codex" and state.session_id == CODEX_ID and state.cwd == str(project)
    assert [(t.role, t.text) for t in turns] == [
        ("user", "Add retry backoff to the payments HTTP client"),
        ("assistant", "[tool exec_command cat src/http/client.py]"),
        ("user", "[result exec_command cat src/http/client.py: ok — import httpx]"),
        ("assistant", "[tool apply_patch src/http/client.py, src/http/backoff.py]"),
        ("user", "[result apply_patch src/http/client.py, src/http/backoff.py: ok — Success. Updated the following files:]"),
        ("assistant", "[tool exec_command pytest -q tests]"),
        ("user", "[result exec_command pytest -q tests: error — F.. 1 failed]"),
        ("assistant", "We decided to use exponential backoff with full jitter in the payments client."),
    ]
    assert state.title() == "Add retry backoff to the payments HTTP client"
    assert state.files_read == ["src/http/client.py"]
    assert state.files_modified == ["src/http/client.py", "src/http/backoff.py"]
    assert state.tool_counts == {"exec_command": 2, "apply_patch": 1}
    assert state.pending_tools == {} and state.malformed == 0
    assert (state.first_timestamp, state.last_timestamp) == (stamp(6), stamp(18))
    text = "\n".join(t.text for t in turns)
    assert HOOK_TEXT not in text and "AGENTS.md" not in text and "haiku" not in text and "environment_context" not in text


def test_codex_ingest_grows_in_the_same_dialect_and_is_searchable(project: Path, tmp_path: Path) -> None:
    transcript = codex_transcript(tmp_path, str(project))
    first = ingest_transcript(project, transcript)
    assert first.session_id == CODEX_ID and first.mode == "full" and first.turns == 8
    with transcript.open("a") as handle:
        handle.write(dumps(codex_second_part()))
    again = ingest_transcript(project, transcript)
    assert again.mode == "appended" and again.new_turns == 3 and again.turns == 11
    record = load_session(project, CODEX_ID)
    assert record is not None and record.state.agent == "codex" and record.state.compactions == 1
    assert [t.n for t in record.turns] == list(range(11))
    assert record.turns[-3].text == "Use my token [REDACTED:github_token] to open the pull request"
    assert record.turns[-2].role == "compact_summary"
    assert record.turns[-2].text == "The retry backoff lives in src/http/backoff.py; one test still fails."
    stored = session_file(project, CODEX_ID).read_text()
    assert SECRET not in stored and HOOK_TEXT not in stored
    hits = search_sessions(project, "exponential backoff jitter")
    assert hits and hits[0].session_id == CODEX_ID


def test_a_line_of_another_dialect_is_skipped_not_parsed(project: Path) -> None:
    """Once a transcript's dialect is known, a line of another agent's format does not change it."""
    _, state = parse_lines(dumps(codex_first_part(str(project))).splitlines(), cwd=str(project))
    stray = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "a Claude Code prompt"}, "uuid": "u1"}),
        json.dumps({"type": "user.message", "data": {"content": "a Copilot prompt"}, "id": "e1"}),
        json.dumps({"id": "g1", "type": "user", "content": [{"text": "a Gemini prompt"}]}),
        "not json at all",
        json.dumps(codex_message(40, "user", "the Codex prompt after them")),
    ]
    turns, after = parse_lines(stray, ParseState.from_dict(json.loads(json.dumps(state.to_dict()))), cwd=str(project))
    assert after.agent == "codex" and [t.text for t in turns] == ["the Codex prompt after them"]
    assert turns[0].n == state.turns
    assert after.malformed == state.malformed + 1 and after.skipped == state.skipped + 3


# ------------------------------------------------------------------------------ Gemini


def gemini_rows(cwd: str) -> list[dict]:
    read_call = {"id": "read_file__read_file_1_0", "name": "read_file", "args": {"file_path": f"{cwd}/../{Path(cwd).name}/src/app.py"},
                 "result": [{"functionResponse": {"id": "read_file__read_file_1_0", "name": "read_file",
                                                  "response": {"output": f"print('hi')\n\n\n<hook_context>{HOOK_TEXT} AfterTool</hook_context>"}}}],
                 "status": "success", "timestamp": stamp(4), "displayName": "ReadFile"}
    edit_call = {"id": "replace__replace_2_0", "name": "replace",
                 "args": {"file_path": f"{cwd}/src/app.py", "old_string": "hi", "new_string": "hello", "instruction": "greet"},
                 "status": "success", "timestamp": stamp(7), "displayName": "Edit"}
    tokens = {"input": 10, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 15}
    return [
        {"sessionId": GEMINI_ID, "projectHash": hashlib.sha256(cwd.encode()).hexdigest(), "startTime": stamp(0),
         "lastUpdated": stamp(0), "kind": "main"},
        {"$set": {"messages": [{"id": "d049", "timestamp": stamp(0), "type": "user", "content": [{"text":
            f"<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - {cwd}\n- **Directory Structure:**\n</session_context>"}]}],
            "lastUpdated": stamp(0)}},
        {"id": "u-1", "timestamp": stamp(1), "type": "user",
         "content": [{"text": f"<hook_context>{HOOK_TEXT} SessionStart</hook_context>\n\nMake the greeting in src/app.py friendlier"},
                     {"text": f"<hook_context>{HOOK_TEXT} BeforeAgent</hook_context>"}],
         "displayContent": [{"text": f"<hook_context>{HOOK_TEXT} SessionStart</hook_context>\n\nMake the greeting in src/app.py friendlier"}]},
        {"$set": {"lastUpdated": stamp(1)}},
        {"id": "g-1", "timestamp": stamp(2), "type": "gemini", "content": "Let me read the file first.", "thoughts": [],
         "tokens": tokens, "model": "gemini-3.8-flash"},
        {"id": "g-1", "timestamp": stamp(2), "type": "gemini", "content": "Let me read the file first.", "thoughts": [],
         "tokens": tokens, "model": "gemini-3.8-flash", "toolCalls": [read_call]},
        {"id": "u-2", "timestamp": stamp(5), "type": "user", "content": read_call["result"]},
        {"id": "g-2", "timestamp": stamp(6), "type": "gemini", "content": "", "thoughts": [], "model": "gemini-3.8-flash"},
        {"id": "g-2", "timestamp": stamp(6), "type": "gemini", "content": "", "thoughts": [{"subject": "Plan", "description": "private"}],
         "model": "gemini-3.8-flash", "toolCalls": [edit_call]},
        {"id": "g-2", "timestamp": stamp(6), "type": "gemini", "content": "", "thoughts": [], "tokens": tokens,
         "model": "gemini-3.8-flash", "toolCalls": [edit_call | {"status": "success", "result": []}]},
        {"id": "u-3", "timestamp": stamp(8), "type": "user", "content": [{"functionResponse": {"id": "replace__replace_2_0", "name": "replace",
         "response": {"output": f"Successfully modified file: {cwd}/src/app.py (1 replacements).\n<hook_context>{HOOK_TEXT}</hook_context>"}}}]},
        {"id": "i-1", "timestamp": stamp(9), "type": "info", "content": "Request cancelled."},
        {"id": "g-3", "timestamp": stamp(10), "type": "gemini", "content": "Edit done: the greeting now says hello.",
         "thoughts": [], "tokens": tokens, "model": "gemini-3.8-flash"},
        {"$set": {"lastUpdated": stamp(10), "summary": "Friendlier greeting in src/app.py"}},
    ]


def gemini_transcript(home: Path, cwd: str, rows: list[dict], name: str = "session-2026-11-27T12-55-5606d631.jsonl") -> Path:
    chats = home / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {cwd: "proj"}}))
    path = chats / name
    path.write_text(dumps(rows))
    return path


def test_gemini_chat_turns_without_hook_context_or_repeats(project: Path) -> None:
    turns, state = parse_lines(dumps(gemini_rows(str(project))).splitlines(), cwd=str(project))
    assert state.agent == "gemini" and state.session_id == GEMINI_ID and state.cwd == str(project)
    assert [(t.role, t.text) for t in turns] == [
        ("user", "Make the greeting in src/app.py friendlier"),
        ("assistant", "Let me read the file first."),
        ("assistant", "[tool read_file src/app.py]"),
        ("user", "[result read_file src/app.py: ok — print('hi')]"),
        ("assistant", "[tool replace src/app.py]"),
        ("user", f"[result replace src/app.py: ok — Successfully modified file: {project}/src/app.py (1 replacements).]"),
        ("assistant", "Edit done: the greeting now says hello."),
    ]
    assert state.files_read == ["src/app.py"] and state.files_modified == ["src/app.py"]
    assert state.tool_counts == {"read_file": 1, "replace": 1}
    assert state.first_prompt == "Make the greeting in src/app.py friendlier"
    assert state.title() == "Friendlier greeting in src/app.py"  # the summary Gemini wrote
    text = "\n".join(t.text for t in turns)
    assert HOOK_TEXT not in text and "hook_context" not in text and "session_context" not in text and "private" not in text


def test_gemini_ingest_by_hook_payload_node_and_search(project: Path, agent_homes: Path) -> None:
    rows = gemini_rows(str(project))
    rows[2]["content"][0]["text"] += f" (my token is {SECRET})"
    transcript = gemini_transcript(agent_homes / "gemini-home", str(project), rows[:8])
    assert session_id_for(transcript) == GEMINI_ID  # from the header: the file name holds only 8 characters of it
    result = ingest_from_payload(project, {"transcript_path": str(transcript), "session_id": GEMINI_ID})
    assert result is not None and result.mode == "full" and result.turns == 4
    with transcript.open("a") as handle:  # the record g-2 goes on being rewritten in the grown part
        handle.write(dumps(rows[8:]))
    result = ingest_from_payload(project, {"transcript_path": str(transcript), "session_id": GEMINI_ID})
    assert result is not None and result.mode == "appended" and result.turns == 7
    record = load_session(project, GEMINI_ID)
    assert record is not None and record.state.agent == "gemini"
    assert sum(t.text == "[tool replace src/app.py]" for t in record.turns) == 1
    assert "[REDACTED:github_token]" in record.turns[0].text
    stored = session_file(project, GEMINI_ID).read_text()
    assert SECRET not in stored and HOOK_TEXT not in stored
    assert any(h.session_id == GEMINI_ID for h in search_sessions(project, "greeting hello"))
    autology = Autology.open(project)
    try:
        node = write_session_node(autology, GEMINI_ID)
        assert node is not None and node.action == "created"
        content = autology.get(node.node_id).content
        assert "agent: gemini" in content and SECRET not in content and HOOK_TEXT not in content
    finally:
        autology.close()


def test_a_gemini_resume_stub_does_not_empty_the_session(project: Path, agent_homes: Path) -> None:
    cwd = str(project)
    original = gemini_transcript(agent_homes / "gemini-home", cwd, gemini_rows(cwd), "session-2026-11-27T12-54-5606d631.jsonl")
    stub = gemini_transcript(agent_homes / "gemini-home", cwd, gemini_rows(cwd)[:2], "session-2026-11-27T12-56-5606d631.jsonl")
    assert ingest_transcript(project, original).turns == 7
    result = ingest_transcript(project, stub)
    assert result.session_id == GEMINI_ID and result.mode == "unchanged" and result.turns == 7
    record = load_session(project, GEMINI_ID)
    assert record is not None and len(record.turns) == 7 and record.transcript == str(original)


# ------------------------------------------------------------------------------ Copilot


def copilot_event(second: int, kind: str, data: dict, **extra) -> dict:
    return {"type": kind, "data": data, "id": f"e-{second}-{kind}", "timestamp": stamp(second), "parentId": None} | extra


def copilot_rows(cwd: str) -> list[dict]:
    return [
        copilot_event(0, "session.start", {"sessionId": COPILOT_ID, "version": 1, "producer": "copilot-agent",
                                           "copilotVersion": "1.0.102", "selectedModel": "gpt-4.1",
                                           "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}}),
        copilot_event(1, "hook.start", {"hookType": "userPromptSubmitted", "input": {"prompt": "Rename the config loader"}}),
        copilot_event(2, "hook.end", {"hookType": "userPromptSubmitted", "success": True, "output": {"additionalContext": HOOK_TEXT}}),
        copilot_event(3, "user.message", {
            "content": "Rename the config loader to load_settings",
            "transformedContent": f"<current_datetime>{stamp(3)}</current_datetime>\n\nRename the config loader to load_settings\n\n"
                                  f"<system_reminder>\n{HOOK_TEXT}\n</system_reminder>", "turnId": "0"}),
        copilot_event(4, "system.message", {"role": "system", "content": "You are the GitHub Copilot CLI."}),
        copilot_event(5, "assistant.turn_start", {"turnId": "0"}),
        copilot_event(6, "assistant.message", {"messageId": "m1", "content": "", "toolRequests": [
            {"toolCallId": "call_1", "name": "view", "arguments": {"path": f"{cwd}/src/config.py"}, "type": "function"}]}),
        copilot_event(7, "tool.execution_start", {"toolCallId": "call_1", "toolName": "view", "arguments": {"path": f"{cwd}/src/config.py"}}),
        copilot_event(8, "tool.execution_complete", {"toolCallId": "call_1", "success": True, "result": {
            "content": f"def load_config():\n    ...\n\n\nTool \"view\" succeeded. Additional guidance from postToolUse hooks:\n{HOOK_TEXT}",
            "detailedContent": "diff --git a/src/config.py"}}),
        copilot_event(9, "assistant.message", {"messageId": "m2", "content": "Renaming it now.", "toolRequests": [
            {"toolCallId": "call_2", "name": "edit", "arguments": {"path": f"{cwd}/src/config.py", "old_str": "load_config",
                                                                 "new_str": "load_settings"}},
            {"toolCallId": "call_3", "name": "bash", "arguments": {"command": "pytest -q", "description": "run the tests"}}]}),
        copilot_event(10, "tool.execution_complete", {"toolCallId": "call_2", "success": True, "result": {"content": "File updated."},
                                                      "fileEdits": [{"kind": "edit", "path": f"{cwd}/src/config.py"},
                                                                    {"kind": "create", "path": f"{cwd}/src/settings.py"}]}),
        copilot_event(11, "tool.execution_complete", {"toolCallId": "call_3", "success": False,
                                                      "error": {"message": "2 failed, 10 passed"}}),
        copilot_event(12, "assistant.message", {"messageId": "m3", "content": "sub-agent chatter"}, agentId="sub-1"),
        copilot_event(13, "assistant.message", {"messageId": "m4", "content": "Renamed load_config to load_settings; 2 tests fail."}),
        copilot_event(14, "assistant.turn_end", {"turnId": "0"}),
        copilot_event(15, "session.shutdown", {"accountingSnapshot": {}}),
    ]


COPILOT_TURNS = [  # copilot_rows' turns, as session memory keeps them
    ("user", "Rename the config loader to load_settings"),
    ("assistant", "[tool view src/config.py]"),
    ("user", "[result view src/config.py: ok — def load_config():]"),
    ("assistant", "Renaming it now.\n[tool edit src/config.py]\n[tool bash pytest -q]"),
    ("user", "[result edit src/config.py: ok — File updated.]"),
    ("user", "[result bash pytest -q: error — 2 failed, 10 passed]"),
    ("assistant", "Renamed load_config to load_settings; 2 tests fail."),
]


def copilot_transcript(home: Path, cwd: str, session_id: str = COPILOT_ID, rows: list[dict] | None = None) -> Path:
    folder = home / "session-state" / session_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workspace.yaml").write_text(f"id: {session_id}\ncwd: {cwd}\ngit_root: {cwd}\nbranch: main\n")
    path = folder / "events.jsonl"
    path.write_text(dumps(rows if rows is not None else copilot_rows(cwd)))
    return path


def test_copilot_events_turns_files_and_no_reminders(project: Path) -> None:
    turns, state = parse_lines(dumps(copilot_rows(str(project))).splitlines(), cwd=str(project))
    assert state.agent == "copilot" and state.session_id == COPILOT_ID and state.git_branch == "main"
    assert [(t.role, t.text) for t in turns] == COPILOT_TURNS
    assert state.files_read == ["src/config.py"] and state.files_modified == ["src/config.py", "src/settings.py"]
    assert state.tool_counts == {"view": 1, "edit": 1, "bash": 1}
    text = "\n".join(t.text for t in turns)
    assert HOOK_TEXT not in text and "system_reminder" not in text and "Additional guidance" not in text
    assert "sub-agent chatter" not in text and "GitHub Copilot CLI" not in text


def test_copilot_ingest_by_hook_payload_grows_and_refuses_outside(project: Path, agent_homes: Path) -> None:
    rows = copilot_rows(str(project))
    transcript = copilot_transcript(agent_homes / "copilot", str(project), rows=rows[:9])
    assert session_id_for(transcript) == COPILOT_ID
    payload = {"transcript_path": str(transcript), "session_id": COPILOT_ID}
    result = ingest_from_payload(project, payload)
    assert result is not None and result.turns == 3
    with transcript.open("a") as handle:
        handle.write(dumps(rows[9:]))
    result = ingest_from_payload(project, payload)
    assert result is not None and result.mode == "appended" and result.turns == 7
    record = load_session(project, COPILOT_ID)
    assert record is not None and record.state.agent == "copilot" and [t.n for t in record.turns] == list(range(7))
    assert any(h.session_id == COPILOT_ID for h in search_sessions(project, "load_settings renamed"))
    outside = agent_homes / "elsewhere" / COPILOT_ID / "events.jsonl"
    outside.parent.mkdir(parents=True)
    outside.write_text(transcript.read_text())
    assert ingest_from_payload(project, {"transcript_path": str(outside), "session_id": "other"}) is None


def test_hook_payloads_of_each_agent_are_accepted_only_under_its_folder(project: Path, agent_homes: Path) -> None:
    codex = codex_transcript(agent_homes, str(project))
    assert ingest_from_payload(project, {"transcript_path": str(codex), "session_id": CODEX_ID}) is not None
    stray = agent_homes / "codex-copy" / codex.name
    stray.parent.mkdir()
    stray.write_text(codex.read_text())
    assert ingest_from_payload(project, {"transcript_path": str(stray), "session_id": "stray"}) is None
    gemini = gemini_transcript(agent_homes / "gemini-home", str(project), gemini_rows(str(project)))
    assert ingest_from_payload(project, {"transcript_path": str(gemini), "session_id": GEMINI_ID}) is not None


# ------------------------------------------------------------------------------ `autology sessions ingest --all`


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_all_finds_this_projects_sessions_of_every_agent(project: Path, agent_homes: Path, capsys) -> None:
    cwd = str(project)
    codex_transcript(agent_homes, cwd)
    other_rollout = agent_homes / "codex" / "sessions" / "2026" / "11" / "28" / "rollout-2026-11-28T09-00-00-01a21d12-0000-7000-8000-000000000001.jsonl"
    other_rollout.parent.mkdir(parents=True)
    other_rollout.write_text(dumps(codex_first_part("/somewhere/else")))
    gemini_home = agent_homes / "gemini-home"
    original = gemini_transcript(gemini_home, cwd, gemini_rows(cwd), "session-2026-11-27T12-54-5606d631.jsonl")
    gemini_transcript(gemini_home, cwd, gemini_rows(cwd)[:2], "session-2026-11-27T12-56-5606d631.jsonl")  # a resume's stub
    elsewhere = gemini_rows("/somewhere/else")  # the short name once held another project's chats
    elsewhere[0]["sessionId"] = "0b1c2d3e-0000-4000-8000-000000000002"
    gemini_transcript(gemini_home, cwd, elsewhere, "session-2026-11-20T08-00-0b1c2d3e.jsonl")
    copilot_transcript(agent_homes / "copilot", cwd)
    copilot_transcript(agent_homes / "copilot", "/somewhere/else", "96f3ed98-a29a-476f-b550-3cce3549fa69")
    copilot_transcript(agent_homes / "copilot", f"{cwd}/src", "e4af17c3-4fcf-49cd-a062-f2984f682a74")  # started in a subfolder

    code, out, err = run(capsys, "--root", cwd, "sessions", "ingest", "--all", "--json")
    assert code == 0, err
    ingested = {r["session_id"]: r for r in json.loads(out)["ingested"]}
    assert set(ingested) == {CODEX_ID, GEMINI_ID, COPILOT_ID, "e4af17c3-4fcf-49cd-a062-f2984f682a74"}
    assert ingested[GEMINI_ID]["transcript"] == str(original) and ingested[GEMINI_ID]["turns"] == 7
    code, out, _ = run(capsys, "--root", cwd, "sessions", "ingest", "--all", "--agent", "codex", "--json")
    assert code == 0 and [r["session_id"] for r in json.loads(out)["ingested"]] == [CODEX_ID]
    code, out, _ = run(capsys, "--root", cwd, "sessions", "search", "exponential", "backoff", "--json")
    assert code == 0 and json.loads(out)[0]["session_id"] == CODEX_ID
    code, _, err = run(capsys, "--root", cwd, "sessions", "ingest", "--agent", "codex")
    assert code == 1 and "--all" in err


def test_ingest_all_without_any_session_says_so(project: Path, capsys) -> None:
    code, _, err = run(capsys, "--root", str(project), "sessions", "ingest", "--all")
    assert code == 1 and "no Claude Code transcripts" in err and "Codex" in err


def test_session_ids_follow_each_agents_file_names(tmp_path: Path) -> None:
    assert session_id_for(tmp_path / f"rollout-2026-11-27T12-55-05-{CODEX_ID}.jsonl") == CODEX_ID
    assert session_id_for(tmp_path / "session-state" / COPILOT_ID / "events.jsonl") == COPILOT_ID
    assert session_id_for(tmp_path / "session-2026-11-27T12-55-5606d631.jsonl") == "session-2026-11-27T12-55-5606d631"  # no header
    assert session_id_for(tmp_path / "5f3a9c2e-1b7d-4e8f-a6c4-2d9b8e7f1a03.jsonl") == "5f3a9c2e-1b7d-4e8f-a6c4-2d9b8e7f1a03"


def test_dialect_detection_and_old_states() -> None:
    assert detect_agent({"type": "session_meta", "payload": {}}) == "codex"
    assert detect_agent({"sessionId": "s", "projectHash": "h", "startTime": "t"}) == "gemini"
    assert detect_agent({"$set": {"lastUpdated": "t"}}) == "gemini"
    assert detect_agent({"type": "session.start", "data": {}}) == "copilot"
    assert detect_agent({"type": "user", "message": {"content": "x"}, "sessionId": "s"}) == "claude-code"
    assert detect_agent({"type": "queue-operation", "content": "x", "sessionId": "s"}) == ""
    assert ParseState.from_dict({"turns": 3}).agent == "claude-code"  # saved before issue 30: Claude Code's
    assert ParseState.from_dict(ParseState(agent="codex").to_dict()).agent == "codex"


# ------------------------------------------------------------------------------ any input


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "payload", "data", "content", "id", "role", "name", "arguments", "input", "call_id",
                         "output", "text", "toolCalls", "args", "functionResponse", "response", "toolRequests",
                         "result", "path", "file_path", "message", "$set", "cmd", "timestamp", "fileEdits"]) | st.text(max_size=8),
        inner, max_size=5),
    max_leaves=25,
)
HEADERS = {
    "codex": {"type": "session_meta", "payload": {"id": CODEX_ID, "cwd": "/p"}},
    "gemini": {"sessionId": GEMINI_ID, "projectHash": "h"},
    "copilot": {"type": "session.start", "data": {"sessionId": COPILOT_ID}},
}
KINDS = ["response_item", "event_msg", "compacted", "session_meta", "user", "gemini", "user.message", "assistant.message",
         "tool.execution_complete", "session.compaction_complete", "session.title_changed"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(HEADERS)), st.lists(st.tuples(st.sampled_from(KINDS), json_values, json_values), max_size=8))
def test_any_json_lines_in_any_dialect_never_raise(agent: str, rows: list) -> None:
    lines = [json.dumps(HEADERS[agent])]
    for kind, body, extra in rows:
        row = {"type": kind, "payload": body, "data": body, "content": body, "id": "x", "toolCalls": extra, "timestamp": stamp(1)}
        lines.append(json.dumps(row))
        lines.append(json.dumps(body))
    turns, state = parse_lines(lines, cwd="/p")
    assert state.agent == agent and state.turns == len(turns)
    assert all(t.role in ("user", "assistant", "compact_summary") and t.text for t in turns)
