"""What of a commit is text to search, and whose commit it is.

- **Not text:** trailers that name people or process (``Signed-off-by:``, ``Co-authored-by:``,
  ``Reviewed-by:``, ``Change-Id:``, …), CI markers (``[skip ci]``, ``***NO_CI***``), and the
  "Merge pull request #12 from user/branch" line of a merge, whose pull-request title (the body's
  first line) stands in for its subject; a merge without one ("Merge branch 'x'") has no text.
- **What it changed, by name** (:func:`changed_words`): the words of the lines a commit added and
  removed (:func:`autology_mcp.history.log.changes`), repeats kept, so "the fix in ``parsefactories``"
  finds the commit that changed ``parsefactories`` though its message never says so.
- **Secrets:** subject and body go through the same redaction as session transcripts
  (:func:`autology_mcp.common.redact.redact`) before anything is stored; so do changed lines that
  could hold one, and a changed word that looks random (a key, a token, a hash) is not kept.
- **Bots:** a commit a bot authored (``[bot]``, dependabot, renovate, …) or one that only bumps a
  dependency, cuts a release or runs a formatter ("Bump x from 1.2 to 1.3", "chore(deps): …",
  "Apply black", "pre-commit autoupdate") is kept, and weighs :data:`BOT_WEIGHT` of a person's.
"""

from __future__ import annotations

import re

from autology_mcp.common.redact import redact
from autology_mcp.history.log import Commit

BOT_WEIGHT = 0.3
# words kept per commit, in the diff's order, repeats kept (how often it changed a name says what it is about)
CHANGED_WORDS_MAX = 1500

_TRAILER = re.compile(
    r"^(?:signed-off-by|co-authored-by|reviewed-by|reviewed-on|acked-by|tested-by|reported-by|suggested-by|"
    r"helped-by|approved-by|change-id|cc|differential revision|[\w-]*-revid):\s.*$",
    re.IGNORECASE | re.MULTILINE,
)
_CI_MARKER = re.compile(r"\[(?:skip ci|ci skip|no ci|skip actions|actions skip)\]|\*\*\*NO_CI\*\*\*", re.IGNORECASE)
_MERGE_PR = re.compile(r"^Merge (?:pull request|PR) #?\d+ from \S+", re.IGNORECASE)
_MERGE_OTHER = re.compile(r"^Merge (?:branch|remote-tracking branch|tag|commit) ", re.IGNORECASE)
_BOT_AUTHOR = re.compile(
    r"\[bot\]|dependabot|renovate|github-actions|pre-commit-ci|greenkeeper|snyk-bot|imgbot|allcontributors|"
    r"mergify|semantic-release|release-please", re.IGNORECASE)
_BOT_SUBJECT = re.compile(
    r"^(?:(?:build|chore)\((?:deps|deps-dev|release)\)|Bump \S+ (?:from \S+ )?to \S+|Update dependency |"
    r"\[pre-commit\.ci\]|pre-commit autoupdate|(?:Apply|Run|Reformat(?: with)?|Format(?:ted)? with|Autoformat(?: with)?) "
    r"(?:black|prettier|isort|ruff|gofmt|clang-format|rustfmt|yapf|autopep8)|Release v?\d|v?\d+\.\d+(?:\.\d+)*$)",
    re.IGNORECASE,
)


def message(commit: Commit) -> tuple[str, str]:
    """(subject, body) as searched: trailers, CI markers and a merge's own line out, secrets redacted;
    ("", "") for a merge with nothing to say."""
    subject, body = commit.subject, commit.body
    if commit.merge and (_MERGE_PR.match(subject) or _MERGE_OTHER.match(subject)):
        if not _MERGE_PR.match(subject) or not body:
            return "", ""
        subject, _, body = body.partition("\n")
    body = _TRAILER.sub("", body)
    subject, body = _CI_MARKER.sub("", subject), _CI_MARKER.sub("", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    return redact(subject.strip()), redact(body)


def is_bot(commit: Commit) -> bool:
    """A bot's commit, or one that only bumps, releases or formats."""
    return bool(_BOT_AUTHOR.search(commit.author) or _BOT_AUTHOR.search(commit.email)
                or _BOT_SUBJECT.match(commit.subject))


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
# A line that may hold a secret: a word that names one, a long unbroken run, a key block
_MAYBE_SECRET = re.compile(r"pass|secret|token|key|auth|cookie|credential|session|private|BEGIN|"
                           r"[A-Za-z0-9+/=_.-]{20,}", re.IGNORECASE)
_HEXISH = re.compile(r"[0-9a-f]{12,}|[0-9A-F]{12,}")
_RUN = re.compile(r"[A-Za-z0-9+/=]{20,}")  # base64, a key's body: taken out whole when it looks random


def _random_looking(word: str) -> bool:
    """A key, a token or a hash rather than a name: a part (between underscores) of 24 characters or
    more, or of 12 or more that mixes digits and letters, or a long run of hex digits."""
    for part in word.split("_"):
        digits = sum(c.isdigit() for c in part)
        if len(part) >= 24 or (len(part) >= 12 and digits >= 2 and digits < len(part)) or _HEXISH.fullmatch(part):
            return True
    return False


def _random_run(match: re.Match[str]) -> str:
    run = match.group()
    digits = any(c.isdigit() for c in run)
    mixed = any(c in "+/=" for c in run) or (any(c.islower() for c in run) and any(c.isupper() for c in run))
    return " " if digits and mixed else run


def _unsecret(line: str) -> str:
    return _RUN.sub(_random_run, redact(line))


def changed_words(changed: str) -> str:
    """The words of a commit's changed lines in order, repeats kept, a snake_case name followed by its
    :func:`joined_name`, at most :data:`CHANGED_WORDS_MAX`: lines that may hold a secret redacted first
    (and a random-looking run of a key's alphabet taken out whole), random-looking words left out."""
    lines = [_unsecret(line) if _MAYBE_SECRET.search(line) else line for line in changed.splitlines()]
    words: list[str] = []
    for word in _WORD.findall("\n".join(lines)):
        if _random_looking(word):
            continue
        words.append(word)
        if "_" in word.strip("_"):
            words.append(joined_name(word))
        if len(words) >= CHANGED_WORDS_MAX:
            break
    return " ".join(words[:CHANGED_WORDS_MAX])


_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+\b")


def joined_name(name: str) -> str:
    """A snake_case name as one word (``holder_obj_seen`` → ``holderobjseen``): full-text search splits at
    underscores, and the whole name is far rarer than its parts."""
    return name.replace("_", "").lower()


def joined_names(query: str) -> list[str]:
    """The snake_case names of a query as :func:`joined_name` words."""
    return list(dict.fromkeys(joined_name(m) for m in _SNAKE.findall(query)))
