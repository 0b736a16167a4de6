"""The commit that explains the lines an agent reads (issue 41: blame at a read).

When the agent reads a file, the commit that last changed the lines it read may say why they are as
they are. ``git blame`` finds it for a range of lines (a Read with ``offset``/``limit``, at most
:data:`BLAME_MAX_LINES` lines, within :data:`BLAME_TIMEOUT_S`); for a whole file it is the newest
indexed commit that touched the file (the history index, no git walk). It is told only when its
message explains: a person's commit (not a bot's) whose body has at least :data:`MIN_WORDS` words.
The text told is the index's (trailers out, secrets redacted: :mod:`autology_mcp.history.text`),
never git's raw message. Nothing is told when history is off, the file is not tracked, or blame
takes too long.
"""

from __future__ import annotations

import re
import subprocess
from datetime import datetime
from pathlib import Path

from autology_mcp.history.config import load_history_config
from autology_mcp.history.index import CommitHit, HistoryIndex

MIN_WORDS = 8  # a body this long says something a subject cannot
BLAME_MAX_LINES = 400
BLAME_TIMEOUT_S = 0.5
_SHA_LINE = re.compile(r"^([0-9a-f]{40}) \d+ \d+", re.MULTILINE)


def explains(hit: CommitHit) -> bool:
    """Whether a commit's message explains: a person's, with a body of at least :data:`MIN_WORDS` words."""
    return not hit.bot and len(hit.body.split()) >= MIN_WORDS


def blamed(root: Path, rel: str, start: int, end: int) -> list[str]:
    """The commits ``git blame`` gives lines ``start``-``end`` of ``rel`` ([] when git fails or is slow;
    lines not committed yet are left out)."""
    try:
        out = subprocess.run(
            ["git", "blame", "--porcelain", "-L", f"{start},{end}", "--", rel],
            cwd=root, capture_output=True, text=True, timeout=BLAME_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return list(dict.fromkeys(s for s in _SHA_LINE.findall(out.stdout) if s.strip("0")))


def explaining_commit(root: Path, rel: str, lines: list[tuple[int, int]] | None) -> CommitHit | None:
    """The commit that last changed the lines of ``rel`` read (``lines``: 1-based ranges, None for the
    whole file), when its message explains them; None otherwise."""
    if not load_history_config(root).enabled:
        return None
    index = HistoryIndex(root)
    try:
        index.sync()
        if lines and len(lines) == 1 and lines[0][1] - lines[0][0] < BLAME_MAX_LINES:
            start, end = lines[0]
            with open(root / rel, "rb") as f:  # blame refuses a range past the end of the file
                end = min(end, max(1, sum(1 for _ in f)))
            found = index.commits(blamed(root, rel, start, end))  # newest first
            when = [datetime.fromisoformat(h.date) for h in found]  # instants: dates may carry other offsets
            newest = [h for h, at in zip(found, when) if at == when[0]]  # commits of one second: the one that explains
            hit = next((h for h in newest if explains(h)), newest[0]) if found else None
        else:
            hit = index.last_touching(rel)
    except Exception:  # the history failing must not fail the Read's hook
        return None
    finally:
        index.close()
    return hit if hit is not None and explains(hit) else None
