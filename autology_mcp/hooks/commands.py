"""Which git/GitHub events a Bash command line contains: ``git commit``, ``gh pr create``, ``gh pr merge``.

Claude Code's hook matcher only sees the tool name (``Bash``), so the handler itself reads the
command. A command line is split into simple commands at ``&&``, ``||``, ``;``, ``|``, ``&`` and
newlines; in each one, leading ``VAR=value`` assignments and wrappers (``sudo``, ``env``,
``command``, ``time``, ``nohup``) are skipped, git's global options (``-C dir``, ``-c key=value``,
``--no-pager`` …) are skipped, and ``sh -c '…'`` / ``bash -c '…'`` are looked into.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

GIT_COMMIT = "git_commit"
PR_CREATE = "pr_create"
PR_MERGE = "pr_merge"

_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "(", ")", "|&"}
_WRAPPERS = {"sudo", "env", "command", "time", "nohup", "exec", "builtin"}
_SHELLS = {"sh", "bash", "zsh", "dash"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# git global options that take a separate value
_GIT_OPTIONS_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
# Fallback when the line cannot be tokenised (unbalanced quotes in a heredoc, say).
_FALLBACK = {
    GIT_COMMIT: re.compile(
        r"(?:^|[;&|\n(`]|\$\()\s*(?:[A-Za-z_]\w*=\S*\s+)*git\s+(?:-\S+(?:\s+[^-\s]\S*)?\s+)*commit\b"
    ),
    PR_CREATE: re.compile(r"(?:^|[;&|\n(`]|\$\()\s*(?:[A-Za-z_]\w*=\S*\s+)*gh\s+pr\s+create\b"),
    PR_MERGE: re.compile(r"(?:^|[;&|\n(`]|\$\()\s*(?:[A-Za-z_]\w*=\S*\s+)*gh\s+pr\s+merge\b"),
}


@dataclass(frozen=True)
class GitEvent:
    kind: str  # git_commit | pr_create | pr_merge
    git_dir: str | None = None  # the directory given with ``git -C``, if any


def _tokens(command: str) -> list[str] | None:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def _simple_commands(tokens: list[str]) -> list[list[str]]:
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set(";&|()"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def _strip_prefix(words: list[str]) -> list[str]:
    """Drop ``VAR=value`` assignments and wrappers (with their options) before the program name."""
    i = 0
    while i < len(words) and (_ASSIGNMENT.match(words[i]) or words[i] in _WRAPPERS or (i and words[i].startswith("-"))):
        i += 1
    return words[i:]


def _git_event(words: list[str]) -> GitEvent | None:
    git_dir = None
    i = 1
    while i < len(words) and words[i].startswith("-"):
        option = words[i]
        if option in _GIT_OPTIONS_WITH_VALUE:
            if option == "-C" and i + 1 < len(words):
                git_dir = words[i + 1]
            i += 2
        else:
            i += 1
    if i < len(words) and words[i] == "commit":
        if "--dry-run" in words[i + 1 :]:
            return None
        return GitEvent(GIT_COMMIT, git_dir)
    return None


def _events_in(words: list[str], depth: int) -> list[GitEvent]:
    words = _strip_prefix(words)
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    if program == "git":
        event = _git_event(words)
        return [event] if event else []
    if program == "gh" and len(words) >= 3 and words[1] == "pr":
        if words[2] == "create":
            return [GitEvent(PR_CREATE)]
        if words[2] == "merge":
            return [GitEvent(PR_MERGE)]
        return []
    if program in _SHELLS and depth < 3 and "-c" in words[1:]:
        index = words.index("-c", 1)
        if index + 1 < len(words):
            return detect_events(words[index + 1], depth + 1)
    return []


def detect_events(command: str, depth: int = 0) -> list[GitEvent]:
    """The git/GitHub events in a command line, in order (empty for anything else)."""
    if not isinstance(command, str) or not command.strip():
        return []
    tokens = _tokens(command)
    if tokens is None:
        return [GitEvent(kind) for kind, pattern in _FALLBACK.items() if pattern.search(command)]
    events: list[GitEvent] = []
    for words in _simple_commands(tokens):
        events.extend(_events_in(words, depth))
    return events
