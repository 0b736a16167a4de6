"""What of a commit is text to search, and whose commit it is.

- **Not text:** trailers that name people or process (``Signed-off-by:``, ``Co-authored-by:``,
  ``Reviewed-by:``, ``Change-Id:``, …), CI markers (``[skip ci]``, ``***NO_CI***``), and the
  "Merge pull request #12 from user/branch" line of a merge, whose pull-request title (the body's
  first line) stands in for its subject; a merge without one ("Merge branch 'x'") has no text.
- **Secrets:** subject and body go through the same redaction as session transcripts
  (:func:`autology_mcp.common.redact.redact`) before anything is stored.
- **Bots:** a commit a bot authored (``[bot]``, dependabot, renovate, …) or one that only bumps a
  dependency, cuts a release or runs a formatter ("Bump x from 1.2 to 1.3", "chore(deps): …",
  "Apply black", "pre-commit autoupdate") is kept, and weighs :data:`BOT_WEIGHT` of a person's.
"""

from __future__ import annotations

import re

from autology_mcp.common.redact import redact
from autology_mcp.history.log import Commit

BOT_WEIGHT = 0.3

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
