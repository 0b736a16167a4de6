"""Where a project's autology data lives.

The project root is, in order: an explicit ``--root``, ``$AUTOLOGY_ROOT``, ``$CLAUDE_PROJECT_DIR``,
the git top level of the working directory, and finally the working directory itself.
Everything autology writes is under ``<root>/.autology/``.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

AUTOLOGY_DIR = ".autology"


def find_git_toplevel(start: Path) -> Path | None:
    """The git work tree containing ``start``, or None outside git (or without git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=start,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return Path(out.stdout.strip())


def resolve_root(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The project root, following the documented order."""
    for candidate in (explicit, os.environ.get("AUTOLOGY_ROOT"), os.environ.get("CLAUDE_PROJECT_DIR")):
        if candidate:
            return Path(candidate).expanduser().resolve()
    here = (cwd or Path.cwd()).resolve()
    return find_git_toplevel(here) or here


@dataclass(frozen=True)
class ProjectPaths:
    """The layout of ``<root>/.autology/``."""

    root: Path

    @property
    def base(self) -> Path:
        return self.root / AUTOLOGY_DIR

    @property
    def nodes(self) -> Path:
        return self.base / "nodes"

    @property
    def graph_index(self) -> Path:
        return self.base / "graph" / "index.json"

    @property
    def cache(self) -> Path:
        return self.base / "cache"

    @property
    def lock_dir(self) -> Path:
        """The directory whose descriptor the cross-process write lock holds (``.autology/``)."""
        return self.base

    @property
    def node_db(self) -> Path:
        return self.cache / "nodes.sqlite"

    def type_dir(self, node_type: str) -> Path:
        return self.nodes / f"{node_type}s"

    def node_file(self, node_type: str, node_id: str) -> Path:
        return self.type_dir(node_type) / f"{node_id}.md"
