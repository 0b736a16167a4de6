"""One handler, many dialects: Codex CLI, Gemini CLI and Copilot CLI hook payloads (the shapes their CLIs
sent in real runs: docs/agents/<agent>.md) mapped onto the same handlers, answered in each agent's shape,
against a temp git repository with a real store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from core_helpers import GIT_ENV, git

from autology_mcp.hooks import run_agent
from autology_mcp.hooks.commands import FileRead, file_reads
from autology_mcp.hooks.dialects import handler_calls
from autology_mcp.knowledge.service import Autology

ADR = "## Context\nWhy.\n\n## Decision\n{decision}\n\n## Alternatives\nOthers.\n\n## Consequences\nEffects."
RETRY_PY = "import time\n\n\ndef retry(times=3):\n    for i in range(times):\n        time.sleep(2**i)\n"
ON_TOPIC = "How should the websocket reconnect backoff work?"
OFF_TOPIC = "What is the capital of France?"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(RETRY_PY)
    (root / "src" / "other.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Initial commit")
    service = Autology.open(root)
    try:
        service.capture("Reconnect the websocket with exponential backoff",
                        ADR.format(decision="Reconnect the websocket with exponential backoff capped at 30 seconds."),
                        type="decision")
        service.capture("Retry with exponential backoff", ADR.format(decision="Retries back off exponentially."),
                        type="decision", references=["src/retry.py"])
    finally:
        service.close()
    return root


def node_id(root: Path, title: str) -> str:
    service = Autology.open(root)
    try:
        return next(n.id for n in service.store.index.all_nodes() if n.title == title)
    finally:
        service.close()


def hook(agent: str, event: str, payload: dict, root: Path | None = None) -> dict | None:
    text = run_agent(agent, event, json.dumps(payload))
    return json.loads(text) if text else None


def context(agent: str, output: dict | None) -> str:
    assert output is not None, "the hook said nothing"
    if agent == "copilot":
        assert set(output) == {"additionalContext"}
        return output["additionalContext"]
    return output["hookSpecificOutput"]["additionalContext"]


# ------------------------------------------------------------------------------ the prompt


PROMPT_EVENTS = {"codex": "UserPromptSubmit", "gemini": "BeforeAgent", "copilot": None}


def prompt_payload(agent: str, root: Path, prompt: str, session: str = "s1") -> dict:
    if agent == "copilot":
        return {"sessionId": session, "timestamp": 1764000000000, "cwd": str(root), "prompt": prompt}
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": PROMPT_EVENTS[agent], "prompt": prompt,
               "transcript_path": "/nowhere.jsonl"}
    return payload | ({"turn_id": "t1", "model": "gpt-5.5"} if agent == "codex" else {"timestamp": "2026-11-27T00:00:00Z"})


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_prompt_hook_injects_for_on_topic_and_not_for_off_topic(repo: Path, agent: str) -> None:
    decision = node_id(repo, "Reconnect the websocket with exponential backoff")
    out = hook(agent, "user-prompt-submit", prompt_payload(agent, repo, ON_TOPIC))
    text = context(agent, out)
    assert text.startswith("autology — project memory relevant to this prompt") and decision in text
    if agent != "copilot":
        assert out["hookSpecificOutput"]["hookEventName"] == PROMPT_EVENTS[agent]
        assert "systemMessage" not in out
    assert hook(agent, "user-prompt-submit", prompt_payload(agent, repo, OFF_TOPIC, session="s2")) is None
    # the same session is never told the same item twice, whatever the agent
    assert hook(agent, "user-prompt-submit", prompt_payload(agent, repo, ON_TOPIC)) is None


def test_gemini_prompt_is_searched_without_the_session_start_context_it_carries(repo: Path) -> None:
    """Gemini CLI hands BeforeAgent the prompt with SessionStart's context already prefixed to it."""
    prefixed = f"<hook_context>autology — {ON_TOPIC} websocket reconnect backoff</hook_context>\n\n{OFF_TOPIC}"
    assert hook("gemini", "user-prompt-submit", prompt_payload("gemini", repo, prefixed)) is None
    prefixed = f"<hook_context>anything at all</hook_context>\n\n{ON_TOPIC}"
    assert "project memory relevant" in context("gemini", hook("gemini", "user-prompt-submit",
                                                               prompt_payload("gemini", repo, prefixed, "s3")))


# ------------------------------------------------------------------------------ reads, edits, commits


def codex_tool(root: Path, name: str, command: str, response: str = "", session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(root), "hook_event_name": "PostToolUse", "turn_id": "t1",
            "tool_name": name, "tool_input": {"command": command}, "tool_use_id": "call_1", "tool_response": response}


def gemini_tool(root: Path, name: str, args: dict, response: dict | None = None, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(root), "hook_event_name": "AfterTool", "tool_name": name,
            "tool_input": args, "tool_response": response or {"llmContent": ""}}


def copilot_tool(root: Path, name: str, args: dict | str, result: str = "", session: str = "s1") -> dict:
    return {"sessionId": session, "timestamp": 1764000000000, "cwd": str(root), "toolName": name, "toolArgs": args,
            "toolResult": {"resultType": "success", "textResultForLlm": result}}


def reads(agent: str, root: Path, session: str = "s1") -> dict:
    path = str(root / "src" / "retry.py")
    if agent == "codex":
        return codex_tool(root, "Bash", "sed -n '1,40p' src/retry.py", RETRY_PY, session)
    if agent == "gemini":
        return gemini_tool(root, "read_file", {"file_path": path}, session=session)
    return copilot_tool(root, "view", json.dumps({"path": path}), session=session)  # toolArgs as a JSON string


def edits(agent: str, root: Path, session: str = "s1") -> dict:
    path = str(root / "src" / "retry.py")
    if agent == "codex":
        patch = "*** Begin Patch\n*** Update File: src/retry.py\n@@\n-    pass\n+    return 1\n*** End Patch\n"
        return codex_tool(root, "apply_patch", patch, "Success. Updated the following files:\nM src/retry.py", session)
    if agent == "gemini":
        return gemini_tool(root, "replace", {"file_path": path, "old_string": "2**i", "new_string": "2**i"},
                           session=session)
    return copilot_tool(root, "edit", {"path": path, "old_str": "2**i", "new_str": "2**i"}, session=session)


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
@pytest.mark.parametrize("how", [reads, edits])
def test_reading_or_editing_a_governed_file_names_its_decision_once(repo: Path, agent: str, how) -> None:
    decision = node_id(repo, "Retry with exponential backoff")
    text = context(agent, hook(agent, "post-tool-use", how(agent, repo)))
    assert text.startswith('autology — knowledge governing "src/retry.py"') and decision in text
    assert "/autology:" not in text  # Claude Code's skills are named as the tools other agents have
    assert hook(agent, "post-tool-use", how(agent, repo)) is None  # once per session
    assert decision in context(agent, hook(agent, "post-tool-use", how(agent, repo, session="s2")))


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_other_tools_and_ungoverned_files_are_silent(repo: Path, agent: str) -> None:
    if agent == "codex":
        payloads = [codex_tool(repo, "Bash", "rg retry src"), codex_tool(repo, "Bash", "cat src/other.py"),
                    codex_tool(repo, "Bash", "ls -la")]
    elif agent == "gemini":
        payloads = [gemini_tool(repo, "glob", {"pattern": "*.py"}),
                    gemini_tool(repo, "read_file", {"file_path": str(repo / "src" / "other.py")}),
                    gemini_tool(repo, "run_shell_command", {"command": "ls"})]
    else:
        payloads = [copilot_tool(repo, "grep", {"pattern": "retry"}), copilot_tool(repo, "view", {"path": "/etc/hosts"}),
                    copilot_tool(repo, "bash", {"command": "ls"})]
    assert [hook(agent, "post-tool-use", p) for p in payloads] == [None, None, None]


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_a_commit_through_the_shell_names_the_knowledge_of_its_files(repo: Path, agent: str) -> None:
    decision = node_id(repo, "Retry with exponential backoff")
    (repo / "src" / "retry.py").write_text(RETRY_PY + "\n# tuned\n")
    git(repo, "commit", "-qam", "Tune the retry")
    command = "git commit -am 'Tune the retry'"
    payload = (codex_tool(repo, "Bash", command) if agent == "codex" else
               gemini_tool(repo, "run_shell_command", {"command": command}) if agent == "gemini" else
               copilot_tool(repo, "bash", {"command": command}))
    text = context(agent, hook(agent, "post-tool-use", payload))
    assert "autology (post-commit): commit" in text and decision in text
    assert "the autology_capture tool" in text and "/autology:capture" not in text


def test_read_ranges_from_each_dialect_reach_the_handler(repo: Path) -> None:
    calls = handler_calls("gemini", "post-tool-use", gemini_tool(repo, "read_file", {
        "file_path": "src/retry.py", "start_line": 3, "end_line": 9}))
    assert calls == [("post-read", {"agent": "gemini", "session_id": "s1", "cwd": str(repo), "tool_name": "Read",
                                    "tool_input": {"file_path": "src/retry.py", "offset": 3, "limit": 7}})]
    calls = handler_calls("copilot", "post-tool-use", copilot_tool(repo, "view", {"path": "a.py", "view_range": [5, 9]}))
    assert calls[0][1]["tool_input"] == {"file_path": "a.py", "offset": 5, "limit": 5}
    calls = handler_calls("codex", "post-tool-use", codex_tool(repo, "Bash", "head -n 20 a.py b.py"))
    assert [c[1]["tool_input"] for c in calls] == [{"file_path": "a.py", "offset": 1, "limit": 20},
                                                   {"file_path": "b.py", "offset": 1, "limit": 20}]


@pytest.mark.parametrize("command, expected", [
    ("cat notes.txt", [FileRead("notes.txt")]),
    ("sed -n '1,80p' src/a.py", [FileRead("src/a.py", 1, 80)]),
    ("sed -n '3,$p' a.py", [FileRead("a.py", 3, None)]),
    ("nl -ba src/a.py | sed -n '1,40p'", [FileRead("src/a.py")]),
    ("bash -lc 'cat x.py'", [FileRead("x.py")]),
    ("cd src && cat a.py", [FileRead("src/a.py")]),
    ("cd /abs/dir && cat a.py", [FileRead("/abs/dir/a.py")]),
    ("tail -n 5 log.txt", [FileRead("log.txt")]),
    # not reads of a file: searches, in-place edits, redirections, listings
    ("rg retry src", []), ("grep -n x a.py", []), ("sed -i 's/a/b/' f.py", []), ("sed 's/a/b/' f.py", []),
    ("cat a.py > b.py", []), ("ls src", []), ("echo cat a.py", []),
])
def test_files_a_shell_command_reads(command: str, expected: list[FileRead]) -> None:
    assert file_reads(command) == expected


# ------------------------------------------------------------------------------ session start and end


@pytest.mark.parametrize("agent, payload", [
    ("codex", {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup", "model": "gpt-5.5"}),
    ("gemini", {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}),
    ("copilot", {"sessionId": "s1", "timestamp": 1, "source": "new", "initialPrompt": "hi"}),
])
def test_session_start_recall_in_each_shape(repo: Path, agent: str, payload: dict) -> None:
    text = context(agent, hook(agent, "session-start", payload | {"cwd": str(repo)}))
    assert text.startswith("autology — project memory: 2 knowledge node(s)")


def test_after_a_codex_compaction_what_was_told_may_be_told_again(repo: Path) -> None:
    decision = node_id(repo, "Retry with exponential backoff")
    assert decision in context("codex", hook("codex", "post-tool-use", reads("codex", repo)))
    assert hook("codex", "post-tool-use", reads("codex", repo)) is None
    hook("codex", "session-start", {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart",
                                    "source": "compact"})
    assert decision in context("codex", hook("codex", "post-tool-use", reads("codex", repo)))


@pytest.mark.parametrize("agent, payload", [
    ("codex", {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False,
               "transcript_path": "/tmp/none.jsonl", "last_assistant_message": "done"}),
    ("copilot", {"sessionId": "s1", "timestamp": 1, "transcriptPath": "/tmp/none.jsonl", "stopReason": "end_turn"}),
])
def test_session_end_prints_nothing_where_nobody_would_read_it(repo: Path, agent: str, payload: dict) -> None:
    """Codex's Stop and Copilot's agentStop take no context, and show a message to nobody."""
    assert hook(agent, "session-end", payload | {"cwd": str(repo)}) is None


def test_gemini_session_end_without_a_transcript_prints_nothing(repo: Path) -> None:
    """Quiet unless useful (issue 39): the message, when there is one, is in
    tests/sessions/test_sessions_agents.py (a Gemini chat with an edit; one with a single question)."""
    out = hook("gemini", "session-end", {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionEnd",
                                         "reason": "exit", "transcript_path": "/tmp/none.jsonl"})
    assert out is None


def test_camel_case_fields_reach_the_handlers_under_claude_names(repo: Path) -> None:
    ((event, payload),) = handler_calls("copilot", "session-end", {
        "sessionId": "abc", "cwd": str(repo), "transcriptPath": "/x/events.jsonl", "stopReason": "end_turn"})
    assert event == "session-end"
    assert payload == {"agent": "copilot", "session_id": "abc", "cwd": str(repo), "transcript_path": "/x/events.jsonl",
                       "stopReason": "end_turn"}


# ------------------------------------------------------------------------------ the command


@pytest.mark.parametrize("stdin", ["", "not json", "[]", '{"toolName": 3}', '{"tool_name": "Bash", "tool_input": 1}'])
@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_malformed_payloads_are_silent(agent: str, stdin: str) -> None:
    assert run_agent(agent, "post-tool-use", stdin) is None
    assert run_agent(agent, "user-prompt-submit", stdin) is None


def test_the_hook_command_takes_the_agent_and_exits_zero(repo: Path) -> None:
    payload = json.dumps(prompt_payload("copilot", repo, ON_TOPIC))
    for args in (["--agent", "copilot", "user-prompt-submit"], ["user-prompt-submit", "--agent=copilot"]):
        done = subprocess.run([sys.executable, "-m", "autology_mcp.hooks", *args], input=payload, text=True,
                              capture_output=True, cwd=repo, env={**GIT_ENV, "PATH": "/usr/bin:/bin"}, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "project memory relevant" in json.loads(done.stdout)["additionalContext"]
        payload = json.dumps(prompt_payload("copilot", repo, ON_TOPIC, session=f"s-{len(args)}"))
    done = subprocess.run([sys.executable, "-m", "autology_mcp.hooks", "--agent", "cursor", "user-prompt-submit"],
                          input=payload, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "" and "usage: autology hook [--agent" in done.stderr


def test_copilot_session_end_leaves_a_transcript_copilot_writes_late_to_the_follower(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copilot CLI 1.0.102 runs agentStop before it writes the turn to events.jsonl: session-end notes
    the transcript and returns; the follower it starts ingests it once an event stamped at or after
    the hook's time is in it (tests/sessions/test_sessions_late.py has the rest)."""
    import time

    from autology_mcp.sessions import pending
    from autology_mcp.sessions.store import load_header

    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))
    folder = tmp_path / "copilot-home" / "session-state" / "abc-123"
    folder.mkdir(parents=True)
    events = [
        {"type": "session.start", "data": {"sessionId": "abc-123", "context": {"cwd": str(repo)}}, "id": "1",
         "timestamp": "2026-11-27T10:00:00Z", "parentId": None},
        {"type": "user.message", "data": {"content": "Rename the invoice exporter", "transformedContent": "x"},
         "id": "2", "timestamp": "2026-11-27T10:00:01Z", "parentId": "1"},
        {"type": "assistant.message", "data": {"content": "Renamed it.", "toolRequests": []}, "id": "3",
         "timestamp": "2026-11-27T10:00:02Z", "parentId": "2"},
        {"type": "hook.start", "data": {"hookType": "agentStop"}, "id": "4", "timestamp": "2026-11-27T10:00:03Z",
         "parentId": "3"},
    ]
    assert hook("copilot", "session-end", {"sessionId": "abc-123", "cwd": str(repo), "stopReason": "end_turn",
                                           "timestamp": 1795773603000,  # 2026-11-27T10:00:03Z
                                           "transcriptPath": str(folder / "events.jsonl")}) is None
    assert [e.session_id for e in pending.entries(repo)] == ["abc-123"]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    deadline = time.monotonic() + 60
    while pending.entries(repo):
        assert time.monotonic() < deadline, pending.entries(repo)
        time.sleep(0.05)
    header = load_header(repo, "abc-123")
    assert header is not None and header.state.agent == "copilot" and header.state.turns == 2


def test_claude_code_post_tool_use_runs_the_handler_of_its_tool(repo: Path) -> None:
    decision = node_id(repo, "Retry with exponential backoff")
    payload = {"session_id": "c1", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Read",
               "tool_input": {"file_path": str(repo / "src" / "retry.py")}}
    out = hook("claude-code", "post-tool-use", payload)
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse" and decision in context("claude-code", out)
    assert hook("claude-code", "post-tool-use", payload | {"session_id": "c2", "tool_name": "Glob"}) is None


def test_an_apply_patch_edit_touches_the_lines_of_its_hunks(repo: Path) -> None:
    """A Codex patch already ran: the lines its hunks left say what it touched, so a decision about other
    lines of the file (a #L range) is not told, and one about these lines is."""
    from autology_mcp.hooks.dialects import patch_hunks

    patch = ("*** Begin Patch\n*** Update File: src/retry.py\n@@ def retry(times=3):\n     for i in range(times):\n"
             "-        time.sleep(2**i)\n+        time.sleep(2**i + 1)\n*** Add File: src/new.py\n+x = 1\n"
             "*** Delete File: src/old.py\n*** End Patch\n")
    assert patch_hunks(patch) == {"src/retry.py": ["    for i in range(times):\n        time.sleep(2**i + 1)"],
                                  "src/new.py": None}
    (repo / "src" / "retry.py").write_text(RETRY_PY.replace("time.sleep(2**i)", "time.sleep(2**i + 1)"))
    service = Autology.open(repo)
    try:
        first = service.capture("Imports stay at the top of the retry module", ADR.format(decision="Imports first."),
                                type="convention", references=["src/retry.py#L1-L2"]).id
        loop = service.capture("The retry loop sleeps exponentially", ADR.format(decision="Sleep 2**i."),
                               type="decision", references=["src/retry.py#L5-L6"]).id
    finally:
        service.close()
    text = context("codex", hook("codex", "post-tool-use", codex_tool(repo, "apply_patch", patch, session="p1")))
    assert loop in text and first not in text
