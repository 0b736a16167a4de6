from pathlib import Path

import pytest

from autology_mcp.code.config import IndexConfig, config_from_dict, load_index_config
from autology_mcp.common.config import load_config, section
from autology_mcp.common.errors import ValidationError


def test_defaults_without_any_config(tmp_path: Path):
    assert load_config(tmp_path) == {}
    cfg = load_index_config(tmp_path)
    assert cfg == IndexConfig()
    assert cfg.dimension == 384 and cfg.isolation == "branch-worktree"


def test_pyproject_and_local_config_merge_local_wins(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.autology.index]\ncode_max_lines = 40\nexclude_globs = ["**/*.gen.py"]\n'
        '[tool.autology.index.weights]\nbm25 = 2.0\n[tool.autology.other]\nx = 1\n'
    )
    (tmp_path / ".autology").mkdir()
    (tmp_path / ".autology" / "config.toml").write_text("[index]\ncode_max_lines = 60\n[index.weights]\npath = 0.5\n")
    cfg = load_index_config(tmp_path)
    assert cfg.code_max_lines == 60
    assert cfg.exclude_globs == ["**/*.gen.py"]
    assert cfg.weights["bm25"] == 2.0 and cfg.weights["path"] == 0.5 and cfg.weights["vector"] == 0.5
    assert section(tmp_path, "other") == {"x": 1}


def test_bad_settings_are_named(tmp_path: Path):
    with pytest.raises(ValidationError, match="unknown setting"):
        config_from_dict({"chunk_size": 3})
    with pytest.raises(ValidationError, match="must be an integer"):
        config_from_dict({"code_max_lines": "many"})
    with pytest.raises(ValidationError, match="allowed: branch-worktree, none"):
        config_from_dict({"isolation": "per-user"})
    with pytest.raises(ValidationError, match="unknown weight"):
        config_from_dict({"weights": {"magic": 1}})
    with pytest.raises(ValidationError, match="less than code_max_lines"):
        config_from_dict({"code_max_lines": 10, "code_overlap_lines": 10})
    (tmp_path / "pyproject.toml").write_text("[tool.autology\n")
    with pytest.raises(ValidationError, match="not valid TOML"):
        load_config(tmp_path)


def test_build_hash_ignores_query_settings():
    base = IndexConfig()
    assert config_from_dict({"weights": {"bm25": 3}}).build_hash() == base.build_hash()
    assert config_from_dict({"candidates": 50}).build_hash() == base.build_hash()
    assert config_from_dict({"code_max_lines": 50}).build_hash() != base.build_hash()
