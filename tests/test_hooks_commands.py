"""Recognising git commit / gh pr create / gh pr merge inside real Bash command lines."""

from __future__ import annotations

import pytest

from autology_mcp.hooks.commands import GIT_COMMIT, PR_CREATE, PR_MERGE, detect_events

HEREDOC_COMMIT = """git add -A && git commit -m "$(cat <<'EOF'
Add retry with backoff to the client

It's the reconnect path's job now.
EOF
)\""""


@pytest.mark.parametrize(
    "command, kinds",
    [
        ("git commit -m 'Add retry'", [GIT_COMMIT]),
        ("git add -A && git commit -m 'Add retry'", [GIT_COMMIT]),
        ("cd repo; git commit -am wip", [GIT_COMMIT]),
        ("npm test && git commit -m x || echo failed", [GIT_COMMIT]),
        ("git -C services/api -c commit.gpgsign=false commit -m x", [GIT_COMMIT]),
        ("GIT_AUTHOR_DATE=now git commit --amend --no-edit", [GIT_COMMIT]),
        ("/usr/bin/git --no-pager commit -m x", [GIT_COMMIT]),
        ("bash -c 'git add . && git commit -m \"x\"'", [GIT_COMMIT]),
        (HEREDOC_COMMIT, [GIT_COMMIT]),
        ("git commit -m x\ngit push", [GIT_COMMIT]),
        ("gh pr create --title 'Retry' --body 'Adds retry'", [PR_CREATE]),
        ("git push -u origin feat && gh pr create --fill", [PR_CREATE]),
        ("gh pr merge 42 --squash --delete-branch", [PR_MERGE]),
        ("git commit -m x && git push && gh pr create --fill", [GIT_COMMIT, PR_CREATE]),
        ("git commit -m \"it's", [GIT_COMMIT]),  # unbalanced quotes: the regex fallback still sees it
    ],
)
def test_recognises_git_and_pr_events(command: str, kinds: list[str]) -> None:
    assert [e.kind for e in detect_events(command)] == kinds


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git log --oneline --grep commit",
        "echo git commit",
        "echo 'git commit -m x'",
        "grep -rn 'git commit' docs/",
        "git commit --dry-run -m x",
        "git commit-tree HEAD^{tree}",
        "gh pr list",
        "gh pr view 42",
        "pytest -q tests/test_commit.py",
        "ls -la",
        "",
        "   ",
    ],
)
def test_ignores_everything_else(command: str) -> None:
    assert detect_events(command) == []


def test_git_dash_c_directory_is_reported() -> None:
    (event,) = detect_events("git -C sub/repo commit -m x")
    assert event.git_dir == "sub/repo"


def test_non_string_command_is_ignored() -> None:
    assert detect_events(None) == []  # type: ignore[arg-type]
