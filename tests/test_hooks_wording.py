"""Issue 39: no hook text names a skill or a command the agent lacks. Claude Code's plugin has the
``/autology:…`` skills; Claude Code set up with ``autology setup claude-code`` (no plugin: Claude Code
sets ``CLAUDE_PLUGIN_ROOT`` only for a plugin's hooks), Codex, Gemini CLI and Copilot CLI have the MCP
tools. Every event that has words for the agent, for every agent, through ``run_agent`` (the hook
command's own path), on a real git repository with knowledge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from core_helpers import git
from test_hooks_dialects import (  # noqa: F401 - _env and repo are fixtures
    ON_TOPIC,
    RETRY_PY,
    _env,
    codex_tool,
    copilot_tool,
    edits,
    gemini_tool,
    prompt_payload,
    reads,
    repo,
)

from autology_mcp.hooks import run_agent

AGENTS = ["claude-code+plugin", "claude-code", "codex", "gemini", "copilot"]


def _commit_payload(agent: str, root: Path) -> tuple[str, dict]:
    command = "git commit -am 'Tune the retry'"
    if agent == "codex":
        return "post-tool-use", codex_tool(root, "Bash", command)
    if agent == "gemini":
        return "post-tool-use", gemini_tool(root, "run_shell_command", {"command": command})
    if agent == "copilot":
        return "post-tool-use", copilot_tool(root, "bash", {"command": command})
    return "post-commit", {"session_id": "s1", "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                           "tool_input": {"command": command}, "tool_response": {"stdout": "[main abc] Tune the retry"}}


def _claude_tool(root: Path, tool: str, session: str) -> dict:
    target = {"file_path": str(root / "src" / "retry.py")}
    if tool == "Edit":
        target |= {"old_string": "2**i", "new_string": "2**i"}
    return {"session_id": session, "cwd": str(root), "hook_event_name": "PostToolUse" if tool == "Read" else "PreToolUse",
            "tool_name": tool, "tool_input": target, "tool_response": {}}


def _reads_and_edits(agent: str, root: Path) -> list[tuple[str, dict]]:
    """A read of the governed file, and an edit of it in a session of its own (each says its knowledge once)."""
    if agent == "claude-code":
        return [("post-read", _claude_tool(root, "Read", "s1")), ("pre-tool-use", _claude_tool(root, "Edit", "s2"))]
    return [("post-tool-use", reads(agent, root, "s1")), ("post-tool-use", edits(agent, root, "s2"))]


def _prompt(agent: str, root: Path) -> dict:
    if agent == "claude-code":
        return {"session_id": "s3", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": ON_TOPIC}
    return prompt_payload(agent, root, ON_TOPIC, session="s3")


def outputs(agent: str, root: Path, bare: Path) -> list[str]:
    """What every event that speaks prints for ``agent``: session start with knowledge and without a
    store, the prompt, a read and an edit of a governed file, compaction, a commit (session end's
    words are in tests/sessions/test_sessions_agents.py, with the transcripts they need)."""
    name = agent.split("+")[0]
    calls = [("session-start", {"session_id": "s1", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}),
             ("session-start", {"session_id": "s1", "cwd": str(bare), "hook_event_name": "SessionStart", "source": "startup"}),
             ("user-prompt-submit", _prompt(name, root)),
             *_reads_and_edits(name, root),
             ("pre-compact", {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreCompact", "trigger": "manual"})]
    said = []
    for event, payload in calls:
        text = run_agent(name, event, json.dumps(payload), root=str(root if payload["cwd"] == str(root) else bare))
        if text:
            said.append(text)
    assert len(said) >= 5, said  # every one of them speaks but compaction for Codex and Copilot
    (root / "src" / "retry.py").write_text(RETRY_PY + "\n# tuned\n")
    git(root, "commit", "-qam", "Tune the retry")
    event, payload = _commit_payload(name, root)
    text = run_agent(name, event, json.dumps(payload), root=str(root))
    return said + ([text] if text else [])


@pytest.mark.parametrize("agent", AGENTS)
def test_no_hook_text_names_a_skill_or_command_the_agent_lacks(repo: Path, tmp_path: Path, agent: str,  # noqa: F811
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    if agent == "claude-code+plugin":
        monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(tmp_path / "plugin"))
    else:
        monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    said = outputs(agent, repo, bare)
    assert len(said) >= 6, said  # session start (both), the prompt, the read, the edit, the commit: real words
    text = "\n".join(said)
    if agent == "claude-code+plugin":
        assert "/autology:capture" in text  # the plugin's skills are named: what the others must not see
    else:
        assert "/autology:" not in text, text
        assert "autology_capture" in text
    if not agent.startswith("claude-code"):
        assert "claude --continue" not in text and "Claude Code" not in text


def test_claude_codes_pre_compact_prints_plain_words(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Claude Code 2.1 shows a PreCompact hook's output to the person as it is ("completed successfully:
    <output>", seen under tmux: tests/test_agents_interactive.py) and appends it to the compaction
    instructions: plain words, not JSON. Other agents keep their JSON shapes."""
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    payload = json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreCompact", "trigger": "manual"})
    text = run_agent("claude-code", "pre-compact", payload, root=str(repo))
    assert text is not None and text.startswith("autology (manual compaction): keep in the summary every decision")
    assert "the autology_capture tool" in text and not text.lstrip().startswith("{")
    gemini = run_agent("gemini", "pre-compact", payload, root=str(repo))
    assert gemini is None or json.loads(gemini)  # still the agent's JSON (or nothing)
