"""Which files the index covers: include roots, pruned directories, exclude globs, extensions, size.

In a git work tree the candidate list is ``git ls-files``: the tracked files (and, with
``include_untracked = true``, the untracked ones .gitignore does not exclude, so a file an agent has
just written is found before anyone runs ``git add``); elsewhere a directory walk. A file is wanted by its extension or name, or, without an extension, when it starts with a
``#!`` line naming a language we chunk (``scripts/check`` with ``#!/usr/bin/env bash``).
Binaries and generated files are skipped when the file is read (see :func:`classify_content`).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase, translate
from functools import lru_cache
from pathlib import Path

from autology_mcp.code import git
from autology_mcp.code.config import IndexConfig


@dataclass(frozen=True)
class ScannedFile:
    path: str  # relative, POSIX separators
    size: int
    mtime_ns: int


def glob_match(path: str, pattern: str) -> bool:
    """fnmatch on the POSIX path where a leading ``**/`` also matches at the top level."""
    if fnmatchcase(path, pattern):
        return True
    return pattern.startswith("**/") and fnmatchcase(path, pattern[3:])


class GlobSet:
    """Many globs matched at once (same rules as :func:`glob_match`).

    ``**/<name-glob>`` patterns are matched against the file name alone, which is short, so the
    common case stays fast; the other patterns form one regex over the whole path.
    """

    def __init__(self, patterns: tuple[str, ...]):
        names, paths = [], []
        for pattern in patterns:
            if pattern.startswith("**/") and "/" not in pattern[3:]:
                names.append(translate(pattern[3:]))
            else:
                paths.append(translate(pattern))
                if pattern.startswith("**/"):
                    paths.append(translate(pattern[3:]))
        self.names = re.compile("|".join(f"(?:{p})" for p in names)) if names else None
        self.paths = re.compile("|".join(f"(?:{p})" for p in paths)) if paths else None

    def match(self, path: str) -> bool:
        if self.names is not None and self.names.match(path.rsplit("/", 1)[-1]):
            return True
        return self.paths is not None and self.paths.match(path) is not None


@lru_cache(maxsize=64)
def glob_set(patterns: tuple[str, ...]) -> GlobSet:
    return GlobSet(patterns)


def _wanted_name(path: str, cfg: IndexConfig, ext_set: set[str], names: set[str]) -> bool | None:
    """True by extension or name, None for a name without an extension (its first line decides), else False."""
    name = path.rsplit("/", 1)[-1]
    if name in names:
        return True
    dot = name.rfind(".")
    if dot > 0:
        return name[dot:].lower() in ext_set
    return None if dot < 0 else False


def has_script_shebang(path: Path) -> bool:
    """Whether the file starts with a ``#!`` line naming an interpreter whose language is indexed."""
    from autology_mcp.code.chunking import shebang_language

    try:
        with open(path, "rb") as f:
            return shebang_language(f.read(256)) is not None
    except OSError:
        return False


def _under_roots(path: str, roots: list[str]) -> bool:
    for root in roots:
        if root in (".", "", "./"):
            return True
        root = root.strip("/")
        if path == root or path.startswith(root + "/"):
            return True
    return False


def candidate_paths(root: Path, cfg: IndexConfig) -> list[str]:
    """Relative paths that pass every name-based filter, sorted."""
    ext_set = {e.lower() if e.startswith(".") else "." + e.lower() for e in cfg.extensions}
    names = set(cfg.filenames)
    prune = set(cfg.prune_dirs)
    listed = git.list_files(root, cfg.include_untracked) if cfg.use_git and git.is_repo(root) else None
    if listed is None:
        listed = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in prune and not os.path.islink(os.path.join(dirpath, d)))
            rel_dir = os.path.relpath(dirpath, root)
            for fn in filenames:
                rel = fn if rel_dir == "." else f"{rel_dir}/{fn}"
                listed.append(rel.replace(os.sep, "/"))
    excluded = glob_set(tuple(cfg.exclude_globs))
    key = (tuple(cfg.include_roots), tuple(cfg.exclude_globs), tuple(cfg.prune_dirs), tuple(cfg.extensions),
           tuple(cfg.filenames))
    verdicts = _verdicts.setdefault(key, {})  # path -> wanted?, remembered between scans of a long-lived process
    if len(verdicts) > 500_000:
        verdicts.clear()
    out = []
    for path in listed:
        wanted = verdicts.get(path)
        if wanted is None:
            by_name = _wanted_name(path, cfg, ext_set, names)
            wanted = verdicts[path] = (
                by_name is not False
                and not any(p in prune for p in path.split("/")[:-1])
                and _under_roots(path, cfg.include_roots)
                and not excluded.match(path)
            ) and (by_name or None)  # None: no extension, the file's first line decides (not remembered)
        if wanted is None:
            wanted = has_script_shebang(root / path)
        if wanted:
            out.append(path)
    return sorted(set(out))


_verdicts: dict[tuple, dict[str, bool]] = {}


def untracked_left_out(root: Path, cfg: IndexConfig) -> list[str]:
    """The untracked files (not excluded by .gitignore) the index would take with ``include_untracked =
    true``, and leaves out now; empty outside git or when they are already included."""
    if cfg.include_untracked or not cfg.use_git or not git.is_repo(root):
        return []
    return sorted(set(candidate_paths(root, replace(cfg, include_untracked=True))) - set(candidate_paths(root, cfg)))


def scan(root: Path, cfg: IndexConfig) -> list[ScannedFile]:
    """The files to index with their size and mtime (regular files within the size limit)."""
    files = []
    base = str(root)
    for path in candidate_paths(root, cfg):
        try:
            st = os.lstat(os.path.join(base, path))
        except OSError:
            continue  # listed by git but deleted from the work tree
        if not stat.S_ISREG(st.st_mode):  # symlinks and special files are not indexed
            continue
        if st.st_size > cfg.max_file_bytes:
            continue
        files.append(ScannedFile(path, st.st_size, st.st_mtime_ns))
    return files


# Markers of generated files, looked for in the first 5 lines: "@generated", "DO NOT EDIT", or a line
# that starts (after a comment sign) with "[this file is/was] [auto-]generated [by/from/with ...]".
# Prose that merely mentions generated things ("temporary files generated by the tests") does not count.
_GENERATED = re.compile(
    rb"@generated|do not edit"
    rb"|^[ \t]*(?:#+|//+|/\*+|\*|--|;+|<!--)?[ \t]*"
    rb"(?:this (?:file|code|module|table|source) (?:is|was|has been) )?"
    rb"(?:auto(?:matically)?[- ]?)?generated\b(?:[ \t]+(?:by|from|with|using|automatically)\b|[ \t]*[:.]|[ \t]*$)",
    re.I | re.M,
)


def classify_content(data: bytes, cfg: IndexConfig) -> str | None:
    """Why a file's content is skipped (``"binary"``, ``"generated"``, ``"minified"``), or None to index it."""
    if b"\0" in data[:8192]:
        return "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary"
    if cfg.skip_generated:
        head = b"\n".join(data[:4096].split(b"\n")[:5])
        if _GENERATED.search(head):
            return "generated"
        lines = data.count(b"\n") + 1
        if len(data) > 4096 and len(data) / lines > 400:
            return "minified"
    return None
