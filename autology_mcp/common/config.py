"""Project configuration: the ``[tool.autology]`` table.

Two places, read in this order, the later one winning key by key (tables are merged deeply):

1. ``<root>/pyproject.toml``, table ``[tool.autology]`` (e.g. ``[tool.autology.index]``);
2. ``<root>/.autology/config.toml``, the same tables without the ``tool.autology`` prefix
   (e.g. ``[index]``).

Each subsystem reads its own sub-table (the repository index reads ``index``) and validates it.
This module only finds, parses and merges; it returns plain dicts.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.common.paths import ProjectPaths

_cache: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed file ({} when absent); re-parsed only when its size or mtime changes."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StorageError(str(path), f"cannot read config: {exc.strerror or exc}") from exc
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    hit = _cache.get(path)
    if hit is not None and hit[0] == key:
        return copy.deepcopy(hit[1])
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StorageError(str(path), f"cannot read config: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(str(path), f"not valid TOML: {exc}") from exc
    _cache[path] = (key, data)
    return copy.deepcopy(data)


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A new dict: ``override`` on top of ``base``, tables merged recursively, other values replaced."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def load_config(root: str | Path) -> dict[str, Any]:
    """The merged ``[tool.autology]`` configuration of the project at ``root`` ({} when there is none)."""
    root = Path(root)
    pyproject = _read_toml(root / "pyproject.toml")
    tool = pyproject.get("tool", {})
    from_pyproject = tool.get("autology", {}) if isinstance(tool, dict) else {}
    if not isinstance(from_pyproject, dict):
        raise ValidationError("pyproject.toml [tool.autology]", "must be a table")
    local_path = ProjectPaths(root).base / "config.toml"
    from_local = _read_toml(local_path)
    return merge(from_pyproject, from_local)


def section(root: str | Path, name: str) -> dict[str, Any]:
    """One sub-table of the configuration, e.g. ``section(root, "index")``; {} when absent."""
    value = load_config(root).get(name, {})
    if not isinstance(value, dict):
        raise ValidationError(f"[tool.autology.{name}]", f"must be a table, got {type(value).__name__}")
    return value
