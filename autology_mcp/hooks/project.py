"""Which project a hook payload is about, and its store opened for a hook."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.paths import ProjectPaths, resolve_root

if TYPE_CHECKING:
    from autology_mcp.knowledge.store import NodeStore


def project_root(payload: dict[str, Any], root: Path | str | None = None) -> Path:
    cwd = payload.get("cwd")
    return resolve_root(root, cwd=Path(cwd) if isinstance(cwd, str) and cwd else None)


def open_store(root: Path) -> NodeStore | None:
    """The project's store, in step with its files; None when the project has no ``.autology/nodes``.

    Opened for speed: no integrity scan of the cache database, and a refresh that trusts a live
    watcher (the MCP server's) for in-place edits instead of a stat of every node file."""
    if not ProjectPaths(root).nodes.is_dir():
        return None
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root, verify=False)
    store.refresh()
    return store
