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
from test_hooks_dialects import RETRY_PY, _env, codex_tool, copilot_tool, gemini_tool, repo  # noqa: F401 - fixtures

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


def outputs(agent: str, root: Path, bare: Path) -> list[str]:
    """What each event that speaks prints for ``agent``: session start with knowledge and without a store,
    compaction, a commit."""
    name = agent.split("+")[0]
    (root / "src" / "retry.py").write_text(RETRY_PY + "\n# tuned\n")
    git(root, "commit", "-qam", "Tune the retry")
    calls = [("session-start", {"session_id": "s1", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}),
             ("session-start", {"session_id": "s1", "cwd": str(bare), "hook_event_name": "SessionStart", "source": "startup"}),
             ("pre-compact", {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreCompact", "trigger": "manual"}),
             _commit_payload(name, root)]
    said = []
    for event, payload in calls:
        text = run_agent(name, event, json.dumps(payload), root=str(root if payload["cwd"] == str(root) else bare))
        if text:
            said.append(text)
    return said


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
    assert len(said) >= 3, said  # session start (both), and the commit at least: the test reads real words
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
