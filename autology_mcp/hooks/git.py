"""The little git the hooks need: one commit's subject and files, the files touched lately, and
when files were last committed after a given time.

Every call has a short timeout and returns None / an empty list when git is missing or fails:
a hook never breaks because of git.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 2.0
# "[main 1a2b3c4] subject" / "[main (root-commit) 1a2b3c4] subject" in git commit's output
_COMMIT_LINE = re.compile(r"^\[[^\]\n]*?\b([0-9a-f]{7,40})\]", re.MULTILINE)


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    files: tuple[str, ...]  # relative to the repository's top level
    toplevel: Path


def git(cwd: Path | str, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return out.stdout if out.returncode == 0 else None


def toplevel(cwd: Path | str) -> Path | None:
    out = git(cwd, "rev-parse", "--show-toplevel")
    return Path(out.strip()) if out and out.strip() else None


def sha_from_output(text: str | None) -> str | None:
    """The abbreviated commit id ``git commit`` printed, if it printed one."""
    if not isinstance(text, str):
        return None
    match = _COMMIT_LINE.search(text)
    return match.group(1) if match else None


def commit_info(cwd: Path | str, ref: str = "HEAD") -> Commit | None:
    top = toplevel(cwd)
    if top is None:
        return None
    out = git(top, "show", "--no-renames", "--name-only", "--format=%H%x00%s%x00", ref, "--")
    if not out or "\x00" not in out:
        return None
    sha, subject, rest = out.split("\x00", 2)
    files = tuple(line for line in rest.splitlines() if line.strip())
    return Commit(sha=sha.strip(), subject=subject.strip(), files=files, toplevel=top)


def recently_changed(cwd: Path | str, commits: int = 5) -> list[str]:
    """Files changed in the working tree and in the last few commits (relative to the top level)."""
    top = toplevel(cwd)
    if top is None:
        return []
    seen: dict[str, None] = {}
    status = git(top, "status", "--porcelain", "--no-renames", "-uno") or ""
    for line in status.splitlines():
        if len(line) > 3:
            seen[line[3:].strip().strip('"')] = None
    log = git(top, "log", f"-{commits}", "--no-renames", "--name-only", "--format=") or ""
    for line in log.splitlines():
        if line.strip():
            seen[line.strip()] = None
    return list(seen)


def commits_since(cwd: Path | str, paths: list[str], since: float) -> dict[str, float]:
    """For each of ``paths`` (relative to ``cwd``) committed after ``since`` (a Unix time), the time of
    its latest such commit. Bounded by the date: git stops walking at commits older than ``since``,
    so a repository's long history costs nothing (``git log -1 -- path`` would walk all of it)."""
    if not paths:
        return {}
    out = git(cwd, "log", f"--since=@{int(since)}", "--no-renames", "--format=%x00%ct", "--name-only", "--relative",
              "--", *paths) or ""
    wanted, times, when = set(paths), {}, 0.0
    for line in out.splitlines():
        if line.startswith("\x00"):
            when = float(line[1:] or 0)
        elif line.strip() in wanted and line.strip() not in times:
            times[line.strip()] = when
    return times


def is_dirty(cwd: Path | str, path: str) -> bool:
    """True when ``path`` differs from HEAD or is not tracked (False outside a repository)."""
    out = git(cwd, "status", "--porcelain", "--no-renames", "--", path)
    return bool(out and out.strip())

