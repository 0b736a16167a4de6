"""The Claude Code hooks on real-shaped payloads, against temp git repositories and real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from core_helpers import GIT_ENV, git

from autology_mcp.hooks import run
from autology_mcp.hooks.handlers import post_commit, pre_compact, session_end, session_start
from autology_mcp.hooks.output import RECALL_MAX_CHARS
from autology_mcp.knowledge.service import Autology

ADR = "## Context\nWhy.\n\n## Decision\nWhat.\n\n## Alternatives\nOthers.\n\n## Consequences\nEffects."


@pytest.fixture(autouse=True)
def _no_root_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with src/retry.py and src/other.py committed, and an autology store."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text("def retry():\n    pass\n")
    (root / "src" / "other.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Initial commit")
    Autology.open(root).close()
    return root


def capture(
    root: Path, title: str, type: str = "component", refs: list[str] | None = None, content: str = "Text."
) -> str:
    service = Autology.open(root)
    try:
        return service.capture(title, content, type=type, references=refs).id
    finally:
        service.close()


def status_of(root: Path, node_id: str) -> str:
    service = Autology.open(root)
    try:
        return service.get(node_id).status
    finally:
        service.close()


def commit_change(root: Path, path: str, message: str, rewrite: bool = True) -> str:
    """Commit a change of ``path`` a minute from now (after any node captured so far): a rewrite that
    renames ``retry`` (the code moved on), or with ``rewrite=False`` one comment line added."""
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    if not file.exists():
        file.write_text("new\n")
    elif rewrite:
        file.write_text("def attempt(times=5):\n    return times\n")
    else:
        file.write_text(file.read_text() + "# changed\n")
    git(root, "add", path)
    when = f"@{int(time.time()) + 60} +0000"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GIT_COMMITTER_DATE", when)
        env.setenv("GIT_AUTHOR_DATE", when)
        return git(root, "commit", "-m", message)  # git's own output: "[main 1a2b3c4] message ..."


SESSION = {
    "session_id": "7b41cd2d-de84-4479-9ad2-5e738ef7d211",
    "transcript_path": "/home/dev/.claude/projects/-tmp-project/7b41cd2d-de84-4479-9ad2-5e738ef7d211.jsonl",
}


def bash_payload(root: Path, command: str, stdout: str = "", git_operation: dict | None = None) -> dict:
    """A PostToolUse payload for the Bash tool, shaped exactly as Claude Code 2.1.197 sends it
    (recorded from a real run; ``gitOperation`` is what it adds after a commit)."""
    response = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    if git_operation:
        response["gitOperation"] = git_operation
    return SESSION | {
        "cwd": str(root),
        "prompt_id": "655787d2-21e1-4e01-b415-0a78762686c7",
        "permission_mode": "default",
        "effort": {"level": "high"},
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Commit the change"},
        "tool_response": response,
        "tool_use_id": "toolu_01ABCDEF",
        "duration_ms": 80,
    }


def context_of(output: dict) -> str:
    assert output["hookSpecificOutput"]["hookEventName"] in ("PostToolUse", "SessionStart")
    return output["hookSpecificOutput"]["additionalContext"]


# ------------------------------------------------------------------------------ post-commit


def test_chained_commit_names_referencing_nodes_and_marks_them(repo: Path) -> None:
    retry = capture(repo, "Retry with backoff", refs=["src/retry.py#L1-2"])
    folder = capture(repo, "The src package", refs=["src"], content="Holds `retry` and the rest.")
    unrelated = capture(repo, "Other module", refs=["src/other.py"])
    stdout = commit_change(repo, "src/retry.py", "Tune the retry")

    output = post_commit(bash_payload(repo, "git add -A && git commit -m 'Tune the retry'", stdout), repo)

    text = context_of(output)
    assert '"Tune the retry"' in text and "src/retry.py" in text
    assert retry in text and folder in text and unrelated not in text
    assert "marked needs_review" in text
    assert "needs_review" in output["systemMessage"]
    assert status_of(repo, retry) == "needs_review"
    assert status_of(repo, folder) == "needs_review"
    assert status_of(repo, unrelated) == "active"


def test_a_commit_that_changes_nothing_a_node_says_names_it_without_marking(repo: Path) -> None:
    node = capture(repo, "Retry with backoff", refs=["src/retry.py"], content="`retry` does nothing yet.")
    stdout = commit_change(repo, "src/retry.py", "Comment the retry", rewrite=False)

    output = post_commit(bash_payload(repo, "git commit -am 'Comment the retry'", stdout), repo)

    assert node in context_of(output) and "still holds" in context_of(output)
    assert "marked" not in output["systemMessage"]
    assert status_of(repo, node) == "active"


def test_marking_can_be_turned_off(repo: Path) -> None:
    (repo / "pyproject.toml").write_text("[tool.autology.hooks]\nmark_needs_review = false\n")
    node = capture(repo, "Retry with backoff", refs=["src/retry.py"])
    stdout = commit_change(repo, "src/retry.py", "Tune the retry")

    text = context_of(post_commit(bash_payload(repo, "git commit -am 'Tune the retry'", stdout), repo))

    assert node in text and "marked needs_review" not in text
    assert status_of(repo, node) == "active"


def test_node_updated_in_the_same_commit_is_not_marked(repo: Path) -> None:
    node = capture(repo, "Retry with backoff", refs=["src/retry.py"])
    (repo / "src" / "retry.py").write_text("def retry(times=3):\n    pass\n")
    service = Autology.open(repo)
    service.update(node, content="Retries three times.")
    service.close()
    git(repo, "add", "-A")
    stdout = git(repo, "commit", "-m", "Retry three times, and say so")

    text = context_of(post_commit(bash_payload(repo, "git add -A && git commit -m x", stdout), repo))

    assert node in text
    assert status_of(repo, node) == "active"


def test_commit_without_referencing_nodes_suggests_capture(repo: Path) -> None:
    capture(repo, "Other module", refs=["src/other.py"])
    stdout = commit_change(repo, "docs/guide.md", "Write the guide")

    output = post_commit(bash_payload(repo, "git commit -m 'Write the guide'", stdout), repo)

    text = context_of(output)
    assert "docs/guide.md" in text and "No existing knowledge node references" in text
    assert "/autology:capture" in text


def test_commit_sha_reported_by_claude_code_is_used(repo: Path) -> None:
    node = capture(repo, "Retry with backoff", refs=["src/retry.py"])
    commit_change(repo, "src/retry.py", "First change")
    first = git(repo, "rev-parse", "--short", "HEAD").strip()
    commit_change(repo, "src/other.py", "Second change")  # HEAD is now a commit that does not touch retry.py
    operation = {"commit": {"sha": first, "kind": "committed"}}

    text = context_of(post_commit(bash_payload(repo, "git commit -q -m 'First change'", "", operation), repo))

    assert '"First change"' in text and node in text


def test_commit_found_from_head_when_git_printed_nothing(repo: Path) -> None:
    node = capture(repo, "Retry with backoff", refs=["src/retry.py"])
    commit_change(repo, "src/retry.py", "Quiet commit")

    text = context_of(post_commit(bash_payload(repo, "git commit -q -am 'Quiet commit'", ""), repo))

    assert '"Quiet commit"' in text and node in text


def test_git_dash_c_commit_in_a_subdirectory_repo(tmp_path: Path) -> None:
    root = tmp_path / "mono"
    (root / "svc").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "svc" / "api.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    Autology.open(root).close()
    node = capture(root, "The API service", refs=["svc/api.py"])
    (root / "svc" / "api.py").write_text("x = 2\n")
    git(root, "add", "-A")
    stdout = git(root, "commit", "-m", "Change the API")
    payload = bash_payload(root, "git -C svc commit -m 'Change the API'", stdout)

    text = context_of(post_commit(payload, root))

    assert node in text and "svc/api.py" in text


def test_pull_request_events(repo: Path) -> None:
    created = post_commit(
        bash_payload(repo, "git push -u origin feat && gh pr create --fill", "https://github.com/o/r/pull/7\n"), repo
    )
    merged = post_commit(bash_payload(repo, "gh pr merge 7 --squash", ""), repo)

    assert "pull request created" in context_of(created)
    assert "supersede" in context_of(merged)


@pytest.mark.parametrize("command", ["git status", "pytest -q", "echo 'git commit'", "ls && git log -1"])
def test_non_git_bash_commands_are_silent(repo: Path, command: str) -> None:
    assert post_commit(bash_payload(repo, command, "output"), repo) is None


def test_other_tools_are_silent(repo: Path) -> None:
    payload = bash_payload(repo, "git commit -m x")
    payload["tool_name"] = "Write"
    assert post_commit(payload, repo) is None


def test_project_without_store(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "-A")
    stdout = git(root, "commit", "-m", "First")

    text = context_of(post_commit(bash_payload(root, "git commit -m First", stdout), root))

    assert '"First"' in text and "no autology knowledge graph" in text
    assert not (root / ".autology").exists()


def test_commit_outside_a_repository_is_silent(tmp_path: Path) -> None:
    assert post_commit(bash_payload(tmp_path, "git commit -m x", ""), tmp_path) is None


# ------------------------------------------------------------------------------ pre-compact, session-end


@pytest.mark.parametrize("trigger", ["manual", "auto"])
def test_pre_compact_suggests_capturing_decisions(repo: Path, trigger: str) -> None:
    payload = SESSION | {
        "cwd": str(repo),
        "prompt_id": "164f4621-bc41-460e-b616-181bed264e9a",
        "hook_event_name": "PreCompact",
        "trigger": trigger,
        "custom_instructions": None if trigger == "auto" else "keep the API design",
    }
    output = pre_compact(payload, repo)
    assert set(output) == {"systemMessage"}
    assert "decision" in output["systemMessage"] and "/autology:capture" in output["systemMessage"]
    assert trigger in output["systemMessage"]


@pytest.mark.parametrize("reason", ["clear", "logout", "prompt_input_exit", "other"])
def test_session_end_without_a_transcript_to_read_says_nothing(repo: Path, reason: str) -> None:
    """Capture tips only for a session that did something worth recording (issue 39;
    tests/sessions/test_sessions_agents.py has both sides): with no transcript to tell, none."""
    payload = SESSION | {
        "cwd": str(repo),
        "prompt_id": "164f4621-bc41-460e-b616-181bed264e9a",
        "hook_event_name": "SessionEnd",
        "reason": reason,
    }
    assert session_end(payload, repo) == {}


# ------------------------------------------------------------------------------ session-start


def start_payload(root: Path, source: str = "startup") -> dict:
    return SESSION | {"cwd": str(root), "hook_event_name": "SessionStart", "source": source}


@pytest.mark.parametrize("source", ["startup", "resume", "compact"])
def test_session_start_recalls_active_knowledge(repo: Path, source: str) -> None:
    decision = capture(repo, "Use SQLite FTS5 for search", type="decision", content=ADR)
    concept = capture(repo, "Billing cycles", type="concept")
    old = capture(repo, "Old approach", type="decision", content=ADR)
    service = Autology.open(repo)
    service.update(old, status="superseded")
    service.close()

    text = context_of(session_start(start_payload(repo, source), repo))

    assert decision in text and concept in text and old not in text
    assert text.index(decision) < text.index(concept)  # decisions before concepts
    assert len(text) <= RECALL_MAX_CHARS


def test_session_start_puts_nodes_about_recent_changes_first(repo: Path) -> None:
    decision = capture(repo, "A decision", type="decision", content=ADR)
    concept = capture(repo, "Retry concept", type="concept", refs=["src/retry.py"])
    commit_change(repo, "src/retry.py", "Recent change")

    text = context_of(session_start(start_payload(repo), repo))

    assert text.index(concept) < text.index(decision)


def test_session_start_recall_is_capped(repo: Path) -> None:
    service = Autology.open(repo)
    for i in range(60):
        service.capture(f"Convention number {i} about a rather long subject line", "Always do it.", type="convention")
    service.close()

    text = context_of(session_start(start_payload(repo), repo))

    assert len(text) <= RECALL_MAX_CHARS
    assert text.count("\n- [convention]") >= 5
    assert text.rstrip().endswith("/autology:capture.")


def test_session_start_without_store_is_a_short_hint(tmp_path: Path) -> None:
    text = context_of(session_start(start_payload(tmp_path), tmp_path))
    assert "/autology:tutorial" in text and len(text) < 300
    assert not (tmp_path / ".autology").exists()


# ------------------------------------------------------------------------------ the command: stdin, stdout, exit code


@pytest.mark.parametrize("event", ["post-commit", "pre-compact", "session-end", "session-start"])
@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '"a string"', "\x00\xff", '{"truncated": '])
def test_malformed_input_is_silent(event: str, stdin: str) -> None:
    assert run(event, stdin) is None


@pytest.mark.parametrize(
    "payload",
    [
        {"tool_name": "Bash", "tool_input": 5, "cwd": 3},
        {"tool_name": "Bash", "tool_input": {"command": ["git", "commit"]}},
        {"tool_name": "Bash"},
        {},
    ],
)
def test_post_commit_ignores_payloads_of_the_wrong_shape(payload: dict) -> None:
    assert run("post-commit", json.dumps(payload)) is None


@pytest.mark.parametrize("event", ["post-commit", "session-start"])
def test_command_exits_zero_silently_on_garbage(event: str, tmp_path: Path) -> None:
    for argv in (["-m", "autology_mcp", "hook", event], ["-m", "autology_mcp.hooks", event]):
        out = subprocess.run([sys.executable, *argv], input="{broken", capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout == "" and out.stderr == ""


def test_end_to_end_commit_in_a_fresh_repository(repo: Path) -> None:
    """Scripted: a commit in a fresh repo, then the real `autology hook post-commit` command."""
    node = capture(repo, "Retry with backoff", type="decision", content=ADR, refs=["src/retry.py"])
    stdout = commit_change(repo, "src/retry.py", "Retry five times")
    payload = bash_payload(repo, "git add -A && git commit -m 'Retry five times'", stdout)
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOLOGY_ROOT",)} | {"CLAUDE_PROJECT_DIR": str(repo)}

    out = subprocess.run(
        [sys.executable, "-m", "autology_mcp", "hook", "post-commit"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=repo,
        env=env,
    )

    assert out.returncode == 0
    result = json.loads(out.stdout)
    assert node in result["hookSpecificOutput"]["additionalContext"]
    assert "Retry with backoff" in result["hookSpecificOutput"]["additionalContext"]
    assert status_of(repo, node) == "needs_review"


def test_every_referencing_node_is_marked_but_the_list_is_capped(repo: Path) -> None:
    service = Autology.open(repo)
    ids = [
        service.capture(f"Retry note {i}", "About retries.", type="concept", references=["src/retry.py"]).id
        for i in range(13)
    ]
    service.close()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Record the notes")
    stdout = commit_change(repo, "src/retry.py", "Tune the retry")

    output = post_commit(bash_payload(repo, "git commit -am 'Tune the retry'", stdout), repo)

    assert "and 3 more" in context_of(output)
    assert "touches 13 knowledge node(s), 13 marked needs_review" in output["systemMessage"]
    assert all(status_of(repo, node_id) == "needs_review" for node_id in ids)


def test_session_start_flags_a_node_about_a_recent_file_whose_code_moved_on(repo: Path) -> None:
    node = capture(repo, "Retry with backoff", refs=["src/retry.py"], content="`retry` does nothing yet.")
    kept = capture(repo, "Other constant", refs=["src/other.py"], content="`x` is one.")
    commit_change(repo, "src/retry.py", "Rename retry")  # `retry` is gone
    commit_change(repo, "src/other.py", "Comment other", rewrite=False)  # `x` is still there

    text = context_of(session_start({"session_id": "s", "cwd": str(repo), "source": "startup"}, repo))

    line = next(line for line in text.split("\n") if node in line)
    assert 'STALE: "`retry` is gone from src/retry.py (' in line
    assert "STALE" not in next(line for line in text.split("\n") if kept in line)
