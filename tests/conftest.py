"""Shared fixtures for the core test suite: a project root in a temp dir, an opened Autology, an
in-memory MCP client factory. Helper functions live in core_helpers.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from autology_mcp.knowledge.service import Autology

# In CI the property tests are derandomized: the same examples every run, so a red build is
# reproducible and never a new random draw. Locally they explore new examples each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No project root from the environment (the test names it), and git's identity and config fixed."""
    from core_helpers import GIT_ENV

    for name in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def autology(root: Path):
    service = Autology.open(root)
    yield service
    service.close()


@pytest.fixture
def connect(autology: Autology) -> Callable:
    """``async with connect() as client:`` an in-memory MCP client on the ``autology`` fixture."""
    from mcp import Client

    from autology_mcp.server.app import build_server

    def factory(service: Autology | None = None):
        return Client(build_server(service or autology))

    return factory


@pytest.fixture
def capture(autology: Autology) -> Callable[..., str]:
    """Capture a node through the service and return its id (type defaults to concept)."""

    def make(title: str = "A concept", content: str = "Some domain knowledge.", type: str = "concept", **kw) -> str:
        return autology.capture(title, content, type=type, **kw).id

    return make
