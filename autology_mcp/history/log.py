"""Reading commits from git: which commits HEAD reaches, and what each says, touched and changed.

One ``git log`` streams every commit asked for: its sha, parents, author, author date, subject, body
and the files it touched (a merge: the files its first parent did not have, ``--diff-merges=first-parent``,
so a merged pull request names what the pull request changed). Output is NUL- and control-character
framed (``-z``, ``%x1e``/``%x1f``), so no path or message can break the parse. A second ``git log -p
-U0`` streams what each commit changed (:func:`changes`): the lines it added and removed. Nothing is
fetched.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FORMAT = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s%x1f%b%x1f"
FILES_MAX = 200  # files kept per commit: a vendored tree or a mass rename says little beyond its first files
CHANGED_CHARS_MAX = 16_384  # changed lines read per commit: the same holds for a mass rename's lines
# Files whose changed lines are data, not names a person would ask about: lock files, minified or
# generated assets, notebooks' JSON, translations, snapshots.
NOT_READ = re.compile(r"(?:\.lock|-lock\.json|-lock\.yaml|\.min\.js|\.min\.css|\.svg|\.map|\.snap|\.ipynb|"
                      r"\.csv|\.tsv|\.po|\.pot)$", re.IGNORECASE)
TIMEOUT_S = 600


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str  # author date, ISO 8601
    subject: str
    body: str
    files: tuple[str, ...]

    @property
    def merge(self) -> bool:
        return len(self.parents) > 1


def _run(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def head(root: Path) -> str | None:
    """HEAD's sha; None outside git or in a repository without a commit. Read from the repository's
    files when they are plain (``HEAD``, a loose ref or ``packed-refs``: what every search pays, well
    under a millisecond), else asked of git."""
    found = _head_from_files(Path(root))
    if found is not None:
        return found
    out = _run(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() or None if out else None


_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def _head_from_files(root: Path) -> str | None:
    """HEAD resolved through the git directory's files; None when anything is unusual (then git decides)."""
    dot = root / ".git"
    try:
        if dot.is_file():  # a worktree or a submodule: "gitdir: <path>"
            line = dot.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                return None
            git_dir = Path(line[len("gitdir:"):].strip())
            git_dir = git_dir if git_dir.is_absolute() else (root / git_dir).resolve()
        elif dot.is_dir():
            git_dir = dot
        else:
            return None
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        value = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _SHA.match(value):
            return value  # detached
        if not value.startswith("ref: refs/"):
            return None
        ref = value[len("ref: "):]
        for base in (git_dir, common):
            loose = base / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                return sha if _SHA.match(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                if line.endswith(" " + ref) and _SHA.match(line.split(" ", 1)[0]):
                    return line.split(" ", 1)[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None  # an unborn branch, a symbolic ref elsewhere: git decides


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    try:
        out = subprocess.run(["git", "merge-base", "--is-ancestor", older, newer], cwd=root, capture_output=True,
                             timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0


def reachable(root: Path, limit: int, since: str | None = None) -> list[str]:
    """The shas HEAD reaches, newest first, at most ``limit`` (with ``since``: only those ``since`` does not reach)."""
    out = _run(root, "rev-list", f"--max-count={limit}", "HEAD" if since is None else f"{since}..HEAD")
    return out.split() if out else []


def read(root: Path, shas: list[str] | None = None, limit: int | None = None) -> Iterator[Commit]:
    """The commits ``shas`` names (any order), or HEAD's ``limit`` newest, parsed as they stream in."""
    args = ["git", "log", "-z", f"--format={FORMAT}", "--name-only", "--diff-merges=first-parent", "--no-color",
            "--no-renames"]
    if shas is not None:
        args += ["--no-walk=unsorted", "--stdin"]
    else:
        args += [f"--max-count={limit}", "HEAD"]
    try:
        proc = subprocess.Popen(args, cwd=root, stdin=subprocess.PIPE if shas is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return
    try:
        if shas is not None:
            assert proc.stdin is not None
            proc.stdin.write(("\n".join(shas) + "\n").encode())
            proc.stdin.close()
        assert proc.stdout is not None
        pending = b""
        for block in iter(lambda: proc.stdout.read(1 << 16), b""):
            pending += block
            *records, pending = pending.split(b"\x1e")
            for record in records:
                commit = _parse(record)
                if commit is not None:
                    yield commit
        commit = _parse(pending)
        if commit is not None:
            yield commit
    finally:
        proc.stdout and proc.stdout.close()
        proc.wait()


def changes(root: Path, shas: list[str]) -> Iterator[tuple[str, str]]:
    """(sha, changed lines) for each of ``shas``, in their order: the lines its diff against its parent
    adds and removes and the hunks' function context (``git log -p -U0``: no unchanged line), at most
    :data:`CHANGED_CHARS_MAX` characters, the files of :data:`NOT_READ` left out. A merge, or a commit
    whose diff git cannot give, has "" (``git log`` shows no merge's diff unless asked)."""
    if not shas:
        return
    args = ["git", "log", "-p", "-U0", "--no-color", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--format=%x1e%H", "--no-walk=unsorted", "--stdin"]
    try:
        proc = subprocess.Popen(args, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return
    assert proc.stdin is not None and proc.stdout is not None
    try:  # git reads every sha before it writes anything (as in :func:`read`)
        proc.stdin.write(("\n".join(shas) + "\n").encode())
        proc.stdin.close()
    except OSError:
        proc.kill()
        proc.wait()
        return
    sha, lines, size, skip = None, [], 0, False
    try:
        for raw in proc.stdout:
            first = raw[:1]
            if first == b"\x1e":
                if sha is not None:
                    yield sha, "\n".join(lines)
                sha, lines, size, skip = raw[1:].strip().decode("ascii", "replace"), [], 0, False
            elif first == b"d" and raw.startswith(b"diff --git "):
                skip = bool(NOT_READ.search(raw.rstrip().decode("utf-8", "replace")))
            elif skip or size >= CHANGED_CHARS_MAX:
                continue
            elif first in (b"+", b"-") and not raw.startswith((b"+++ ", b"--- ")):
                line = raw[1:].decode("utf-8", "replace").rstrip("\n")
                lines.append(line)
                size += len(line)
            elif first == b"@" and raw.startswith(b"@@"):
                line = raw.rsplit(b"@@", 1)[-1].decode("utf-8", "replace").strip()
                if line:
                    lines.append(line)
                    size += len(line)
        if sha is not None:
            yield sha, "\n".join(lines)
    finally:
        proc.stdout.close()
        proc.wait()


def _parse(record: bytes) -> Commit | None:
    fields = record.split(b"\x1f", 7)
    if len(fields) < 8:
        return None
    sha, parents, author, email, date, subject, body, rest = (f.decode("utf-8", "replace") for f in fields)
    files = tuple(dict.fromkeys(p.strip("\n") for p in rest.split("\0") if p.strip("\n")))[:FILES_MAX]
    return Commit(sha.strip(), tuple(parents.split()), author, email, date, subject.strip(), body.strip(), files)
