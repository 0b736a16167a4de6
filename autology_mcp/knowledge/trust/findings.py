"""A reference judged (:class:`Finding`) and how a flag names its change (:mod:`.staleness`): the later
commits of a reference (:class:`Later`, read only when needed), the first of them that made a test
false (:func:`first_without`), the "3 later commits, the last: ..." information line, and the names
and values a flag shows."""

from __future__ import annotations

import re
from dataclasses import dataclass

from autology_mcp.knowledge.trust.git_history import Commit, History


WALK_MAX = 30  # later commits looked at one by one to name the one that changed something
LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")


@dataclass(frozen=True)
class Finding:
    """One reference of one node, judged."""

    reference: str
    stale: bool
    why: str | None = None  # what changed, and where: the flag's text
    later: str | None = None  # "3 later commits, the last: <subject> (sha, date)": information


def _later_text(commits: list[Commit]) -> str | None:
    if not commits:
        return None
    last = commits[-1]
    many = f"{len(commits)} later commits" if len(commits) > 1 else "1 later commit"
    return f"{many}, the last: {last.subject} ({last.label()})"


def first_without(h: History, later: Later, test) -> str:
    """Which change made ``test`` false: the first later commit whose version fails it, or the working tree
    (or, when the node's code is not in HEAD's history, "since the node was written")."""
    commits = later.commits
    for commit in commits[:WALK_MAX]:
        text = h.content(commit.sha, commit.path)
        if text is None or not test(text):
            return commit.label()
    if len(commits) > WALK_MAX:
        return f"after {commits[WALK_MAX - 1].label()}"
    return "since the node was written" if later.gap else "uncommitted"


class Later:
    """A reference's later commits, read from git only when something needs them; or given (the commits
    after the node's recorded code, with ``gap`` when that code is not in HEAD's history)."""

    def __init__(self, h: History, base: str, path: str, commits: list[Commit] | None = None, gap: bool = False):
        self.h, self.base, self.path, self._commits, self.gap = h, base, path, commits, gap

    @property
    def commits(self) -> list[Commit]:
        if self._commits is None:
            self._commits = self.h.later(self.base, self.path)
        return self._commits

    def text(self, explain: bool) -> str | None:
        """"3 later commits, the last: ..." (only with ``explain``). Without the commits read already, the
        newest few are enough to say it ("more than 30 later commits"): git stops there instead of
        walking the whole range."""
        if not explain:
            return None
        if self._commits is not None:
            return _later_text(self._commits)
        newest = self.h.latest(self.base, self.path, WALK_MAX + 1)
        if len(newest) <= WALK_MAX:
            return _later_text(newest)
        last = newest[-1]
        return f"more than {WALK_MAX} later commits, the last: {last.subject} ({last.label()})"


def _shown(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _stated(values: list[str]) -> str:
    """"`'http://'`, as the node states it, is": the strings and numbers :meth:`Said.values_lost` found."""
    return f"{_shown(values)}, as the node states {'it, is' if len(values) == 1 else 'them, are'}"
