"""Where a namespace's index lives: ``.autology/cache/index/<namespace>/``.

Namespace (seed 003): ``br-<branch-slug>--wt-<worktree-hash>`` with isolation ``branch-worktree``
(a detached HEAD is ``br-detached``; outside git ``default``), or ``default`` with isolation ``none``.

Files in the directory:
- ``index.sqlite``  files, chunks, vectors, symbols and the FTS5 table;
- ``manifest.json`` the deterministic build contract (engine, config hash, git state, stats, checksums);
- ``build.json``    the last build's record (time, reused/rebuilt counts, database digest);
- ``build.lock``    serialises builders across processes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from autology_mcp.code import git
from autology_mcp.code.config import IndexConfig
from autology_mcp.common.errors import StorageError
from autology_mcp.common.fsutil import atomic_write
from autology_mcp.common.paths import ProjectPaths


def namespace(root: Path, cfg: IndexConfig) -> str:
    if cfg.isolation == "none" or not git.is_repo(root):
        return "default"
    br = git.branch(root)
    slug = re.sub(r"[^a-z0-9._-]+", "-", (br or "detached").lower()).strip("-.")[:60] or "detached"
    wt = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[: cfg.worktree_hash_length]
    return f"br-{slug}--wt-{wt}"


def describe_namespace(root: Path, cfg: IndexConfig, name: str) -> str:
    """The namespace in words, for people: which branch and which work tree it is the index of."""
    if name == "default":
        return ("one index for the whole folder (isolation = \"none\")" if cfg.isolation == "none"
                else "one index for the folder (not a git work tree)")
    br = git.branch(root)
    branch = f"branch {br}" if br else "a detached HEAD"
    return (f"the index of {branch} in the work tree {Path(root).resolve()} (each branch and each git worktree "
            "gets its own, so switching back finds its index ready)")


@dataclass(frozen=True)
class IndexLocation:
    root: Path
    namespace: str

    @classmethod
    def of(cls, root: Path, cfg: IndexConfig) -> "IndexLocation":
        return cls(Path(root), namespace(Path(root), cfg))

    @property
    def dir(self) -> Path:
        return ProjectPaths(self.root).cache / "index" / self.namespace

    @property
    def db(self) -> Path:
        return self.dir / "index.sqlite"

    @property
    def manifest(self) -> Path:
        return self.dir / "manifest.json"

    @property
    def build_record(self) -> Path:
        return self.dir / "build.json"

    @property
    def lock(self) -> Path:
        return self.dir / "build.lock"

    def exists(self) -> bool:
        return self.manifest.exists() and self.db.exists()

    def siblings(self) -> list["IndexLocation"]:
        """The other namespaces' indexes of the same work tree (other branches), most recently built
        first: a new branch's first build can start from one of them instead of from nothing."""
        suffix = self.namespace[self.namespace.rfind("--wt-"):] if "--wt-" in self.namespace else None
        if suffix is None:
            return []
        found = []
        for folder in self.dir.parent.glob(f"*{suffix}"):
            other = IndexLocation(self.root, folder.name)
            if folder.name != self.namespace and other.exists():
                found.append((other.manifest.stat().st_mtime_ns, folder.name, other))
        return [other for _, _, other in sorted(found, key=lambda t: (-t[0], t[1]))]


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as sorted, indented JSON, atomically and durably (see fsutil.atomic_write)."""
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Path) -> dict | None:
    """The parsed JSON object, or None when the file is missing or not a JSON object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@contextmanager
def build_lock(loc: IndexLocation) -> Iterator[None]:
    """An exclusive lock on the namespace (blocks until another builder is done)."""
    try:
        loc.dir.mkdir(parents=True, exist_ok=True)
        fh = open(loc.lock, "a+")
    except OSError as exc:
        raise StorageError(str(loc.lock), f"cannot create lock: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


def build_running(loc: IndexLocation) -> bool:
    """Whether a builder (this process or another) holds the namespace's build lock now."""
    try:
        fh = open(loc.lock, "r")
    except OSError:
        return False  # never built here
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False
    finally:
        fh.close()


def file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return open_file_sha256(fh)


def open_file_sha256(fh: BinaryIO) -> str:
    """The SHA-256 of an open file from where it is to its end (it may be renamed meanwhile)."""
    h = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        h.update(block)
    return h.hexdigest()
