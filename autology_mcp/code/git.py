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


def _git_dir(root: Path) -> Path | None:
    """The repository directory of a work tree whose top level is ``root`` (``.git`` or a worktree's gitdir)."""
    dot = Path(root) / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            line = dot.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            gd = Path(line[len("gitdir:"):].strip())
            return gd if gd.is_absolute() else (Path(root) / gd).resolve()
    return None


def git_dir(root: Path) -> Path | None:
    """The git directory of the work tree whose top level is ``root`` (None outside git)."""
    return _git_dir(root)


def is_repo(root: Path) -> bool:
    """Whether ``root`` is the top level of a git work tree (checked on disk, no subprocess)."""
    return _git_dir(root) is not None


def list_files(root: Path, untracked: bool = True) -> list[str] | None:
    """The tracked files (``untracked``: plus the untracked ones .gitignore does not exclude); None outside git."""
    args = ["ls-files", "-z", "--cached"] + (["--others", "--exclude-standard"] if untracked else [])
    out = _git(root, *args)
    if out is None:
        return None
    return sorted({p for p in out.split("\0") if p})


def head(root: Path) -> str | None:
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if out else None


def branch(root: Path) -> str | None:
    """The checked-out branch (None when HEAD is detached), read from HEAD without a subprocess."""
    gd = _git_dir(root)
    if gd is not None:
        try:
            line = (gd / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            line = ""
        if line.startswith("ref: refs/heads/"):
            return line[len("ref: refs/heads/"):]
        if line and not line.startswith("ref:"):
            return None
    out = _git(root, "symbolic-ref", "-q", "--short", "HEAD")
    return out.strip() if out else None


def dirty(root: Path) -> bool | None:
    """Uncommitted changes outside ``.autology/`` (the index itself never makes a tree dirty)."""
    # --no-optional-locks: a read-only status that does not rewrite git's index (the server's file
    # watch would take that write for a change, and a concurrent git command would meet the lock)
    out = _git(root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=normal", "--", ".",
               ":(exclude).autology")
    if out is None:
        return None
    return bool(out.strip())


def state(root: Path) -> dict:
    """``{"head", "branch", "dirty"}``; all None outside git."""
    if not is_repo(root):
        return {"head": None, "branch": None, "dirty": None}
    return {"head": head(root), "branch": branch(root), "dirty": dirty(root)}
