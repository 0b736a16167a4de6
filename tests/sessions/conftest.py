"""Fixtures of the session-memory tests (helpers live in sessions_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autology_mcp.knowledge.store import NodeStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root with an initialised .autology/ store."""
    root = tmp_path / "project"
    root.mkdir()
    store = NodeStore(root)
    store.init()
    store.close()
    return root
