"""Node references (``path``, ``path#L10-40``, ``path#symbol``) matched against project files.

A reference names a file or a folder relative to the project root; a folder reference covers
every file below it. Used by the post-commit hook (which nodes does a commit touch?) and by the
health analysis (which referenced files are missing, or changed since the node was reviewed?).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autology_mcp.knowledge.models import KnowledgeNode


def reference_path(reference: str) -> str:
    """The path part of a reference, without ``#anchor`` and trailing slashes."""
    return reference.split("#", 1)[0].strip().rstrip("/")


def covers(reference: str, file: str) -> bool:
    """True when the reference names ``file`` itself or a folder containing it."""
    path = reference_path(reference)
    return bool(path) and (file == path or file.startswith(path + "/"))


class FileSet:
    """Files indexed by themselves and by every folder above them, so matching a reference is one lookup."""

    def __init__(self, files: Iterable[str]):
        self.files = list(dict.fromkeys(files))
        self._under: dict[str, list[str]] = {}
        for f in self.files:
            parts = f.split("/")
            for depth in range(1, len(parts) + 1):
                self._under.setdefault("/".join(parts[:depth]), []).append(f)

    def covered_by(self, reference: str) -> list[str]:
        return self._under.get(reference_path(reference), [])


def matching_references(node: KnowledgeNode, files: FileSet | Iterable[str]) -> list[str]:
    """The files (from ``files``) this node's references cover, without repeats."""
    file_set = files if isinstance(files, FileSet) else FileSet(files)
    found: dict[str, None] = {}
    for ref in node.references:
        for f in file_set.covered_by(ref):
            found[f] = None
    return list(found)


def nodes_referencing(nodes: Iterable[KnowledgeNode], files: Iterable[str]) -> list[tuple[KnowledgeNode, list[str]]]:
    """Every node that references at least one of ``files``, with the files it covers."""
    file_set = FileSet(files)
    found = []
    for node in nodes:
        matched = matching_references(node, file_set)
        if matched:
            found.append((node, matched))
    return found


def relative_to_root(files: Iterable[str], repo_top: Path, root: Path) -> list[str]:
    """Repository-relative paths re-expressed relative to the autology root (dropping those outside it).

    String work only (a commit can name thousands of files): the root's path below the repository's
    top is computed once, and each file either starts with it or is outside the root."""
    repo_top, root = Path(repo_top).resolve(), Path(root).resolve()
    try:
        prefix = root.relative_to(repo_top).as_posix()
    except ValueError:
        return []  # the root is not inside this repository
    if prefix == ".":
        return [f for f in files if f]
    start = prefix + "/"
    return [f[len(start) :] for f in files if f.startswith(start) and len(f) > len(start)]
