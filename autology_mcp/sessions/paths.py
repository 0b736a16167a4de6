"""Where session memory lives: ``.autology/sessions/`` (gitignored, private to the machine)."""

from __future__ import annotations

from pathlib import Path

from autology_mcp.common.paths import ProjectPaths

SESSIONS_DIR = "sessions"


def sessions_dir(root: Path) -> Path:
    return ProjectPaths(Path(root)).base / SESSIONS_DIR
