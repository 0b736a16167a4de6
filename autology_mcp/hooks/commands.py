"""Which git/GitHub events a Bash command line contains: ``git commit``, ``gh pr create``, ``gh pr merge``.

Claude Code's hook matcher only sees the tool name (``Bash``), so the handler itself reads the
command. A command line is split into simple commands at ``&&``, ``||``, ``;``, ``|``, ``&`` and
newlines; in each one, leading ``VAR=value`` assignments and wrappers (``sudo``, ``env``,
``command``, ``time``, ``nohup``) are skipped, git's global options (``-C dir``, ``-c key=value``,
``--no-pager`` …) are skipped, and ``sh -c '…'`` / ``bash -c '…'`` are looked into.
"""

from __future__ import annotations

import posixpath
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
    script = _shell_script(program, words, depth)
    return detect_events(script, depth + 1) if script is not None else []


def _shell_script(program: str, words: list[str], depth: int) -> str | None:
    """The script of ``sh -c '…'`` / ``bash -lc '…'`` (looked into up to three shells deep), else None."""
    flag = next((w for w in words[1:] if w in ("-c", "-lc")), None)
    if program not in _SHELLS or flag is None or depth >= 3:
        return None
    index = words.index(flag, 1)
    return words[index + 1] if index + 1 < len(words) else None


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


# ------------------------------------------------------------------------------ files a shell command reads

# Programs that print a file's text, as agents without a Read tool read files (Codex CLI runs `cat`,
# `sed -n '1,80p'`, `nl -ba` …). Searches (`rg`, `grep`) and listings are not reads of a file.
_READERS = {"cat", "head", "tail", "sed", "nl", "less", "more", "bat", "batcat"}
_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+|\$))?p$")
# each program's options that take a separate value
_VALUE_OPTIONS = {
    "head": {"-n", "-c", "--lines", "--bytes"},
    "tail": {"-n", "-c", "--lines", "--bytes"},
    "sed": {"-e", "--expression", "-f", "--file", "-l", "--line-length"},
    "nl": {"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"},
    "bat": {"-r", "--line-range", "-H", "--highlight-line", "-l", "--language", "-m", "--map-syntax"},
    "batcat": {"-r", "--line-range", "-H", "--highlight-line", "-l", "--language", "-m", "--map-syntax"},
}


@dataclass(frozen=True)
class FileRead:
    path: str
    start: int | None = None  # 1-based first line shown; None with end None: the whole file
    end: int | None = None  # last line shown; None: to the end


def _read_of(words: list[str]) -> list[FileRead]:
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    start = end = None
    files: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            files.extend(args[i + 1 :])
            break
        if word.startswith("-") and word != "-":
            if program == "head" and re.fullmatch(r"-\d+", word):
                start, end = 1, int(word[1:])
            elif word in _VALUE_OPTIONS.get(program, ()) and i + 1 < len(args):
                if program == "head" and word in ("-n", "--lines") and args[i + 1].isdigit():
                    start, end = 1, int(args[i + 1])
                if program == "sed" and word in ("-e", "--expression"):
                    match = _SED_RANGE.match(args[i + 1])
                    start, end = (int(match.group(1)), _sed_end(match.group(2), match.group(1))) if match else (start, end)
                i += 1
            i += 1
            continue
        match = _SED_RANGE.match(word) if program == "sed" and not files and start is None else None
        if match:
            start, end = int(match.group(1)), _sed_end(match.group(2), match.group(1))
        elif program == "sed" and not files and start is None and not any(a in ("-e", "--expression") for a in args):
            return []  # a sed script that is not a line range: an edit or a search, not a read
        else:
            files.append(word)
        i += 1
    if program == "tail":
        start = end = None  # which lines a tail shows depends on the file's length
    return [FileRead(f, start, end) for f in files if f != "-"]


def _sed_end(end: str | None, start: str) -> int | None:
    if end is None:
        return int(start)
    return None if end == "$" else int(end)


def file_reads(command: str, depth: int = 0) -> list[FileRead]:
    """The files a shell command line prints (``cat``, ``head``, ``sed -n 'A,Bp'``, ``nl`` …), with
    the lines shown when they can be told; empty for anything else (searches, edits, redirections
    into a file)."""
    if not isinstance(command, str) or not command.strip():
        return []
    tokens = _tokens(command)
    if tokens is None:
        return []
    reads: list[FileRead] = []
    where = ""  # the folder a `cd` moved to, relative to where the command line started
    for words in _simple_commands(tokens):
        words = _strip_prefix(words)
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program == "cd" and len(words) == 2:
            where = posixpath.normpath(posixpath.join(where, words[1]))
            continue
        script = _shell_script(program, words, depth)
        if script is not None:
            reads.extend(file_reads(script, depth + 1))
            continue
        if program in _READERS and not any(w.startswith(">") for w in words):
            reads.extend(FileRead(posixpath.join(where, r.path), r.start, r.end) if where else r for r in _read_of(words))
    return reads
