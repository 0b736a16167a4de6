"""Project root resolution and the .autology layout (autology_mcp.common.paths)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from autology_mcp.common.paths import ProjectPaths, resolve_root


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("AUTOLOGY_ROOT", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return monkeypatch


def test_resolution_order(tmp_path, clean_env):
    explicit, env, claude, plain = (tmp_path / n for n in ("explicit", "env", "claude", "plain"))
    for d in (explicit, env, claude, plain):
        d.mkdir()
    assert resolve_root(None, cwd=plain) == plain.resolve()
    clean_env.setenv("CLAUDE_PROJECT_DIR", str(claude))
    assert resolve_root(None, cwd=plain) == claude.resolve()
    clean_env.setenv("AUTOLOGY_ROOT", str(env))
    assert resolve_root(None, cwd=plain) == env.resolve()
    assert resolve_root(str(explicit), cwd=plain) == explicit.resolve()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_top_level_from_a_subfolder(tmp_path, clean_env):
    repo = tmp_path / "repo"
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert resolve_root(None, cwd=sub) == repo.resolve()


def test_layout(tmp_path):
    paths = ProjectPaths(tmp_path)
    assert paths.base == tmp_path / ".autology"
    assert paths.node_file("decision", "x") == tmp_path / ".autology" / "nodes" / "decisions" / "x.md"
    assert paths.graph_index == tmp_path / ".autology" / "graph" / "index.json"
    assert paths.node_db.parent == paths.cache == tmp_path / ".autology" / "cache"
