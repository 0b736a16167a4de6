"""The few git facts the index needs: is this a repo, which files, HEAD, branch, dirty state."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.decode("utf-8", "surrogateescape")


def is_repo(root: Path) -> bool:
    top = _git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == Path(root).resolve()


def list_files(root: Path) -> list[str] | None:
    """Tracked plus untracked-but-not-ignored files (so .gitignore is respected); None outside git."""
    out = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if out is None:
        return None
    return sorted({p for p in out.split("\0") if p})


def head(root: Path) -> str | None:
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if out else None


def branch(root: Path) -> str | None:
    out = _git(root, "symbolic-ref", "-q", "--short", "HEAD")
    return out.strip() if out else None


def dirty(root: Path) -> bool | None:
    """Uncommitted changes outside ``.autology/`` (the index itself never makes a tree dirty)."""
    out = _git(root, "status", "--porcelain", "--untracked-files=normal", "--", ".", ":(exclude).autology")
    if out is None:
        return None
    return bool(out.strip())


def state(root: Path) -> dict:
    """``{"head", "branch", "dirty"}``; all None outside git."""
    if not is_repo(root):
        return {"head": None, "branch": None, "dirty": None}
    return {"head": head(root), "branch": branch(root), "dirty": dirty(root)}
