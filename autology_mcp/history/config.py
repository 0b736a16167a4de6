"""Settings of the history channel, from ``[tool.autology.history]`` (or ``[history]`` in .autology/config.toml).

    [tool.autology.history]
    enabled = true           # false: commits are neither indexed nor searched
    max_commits = 50000      # the newest commits HEAD reaches that are indexed (1-1,000,000)
    changed_lines = true     # false: commits are indexed by their messages and files only (no diffs read:
                             # a first build about 10x faster, the index about a third the size)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autology_mcp.common.config import section
from autology_mcp.common.errors import ValidationError

WHERE = "[tool.autology.history]"
MAX_COMMITS = 50_000


@dataclass(frozen=True)
class HistoryConfig:
    enabled: bool = True
    max_commits: int = MAX_COMMITS
    changed_lines: bool = True


def config_from_dict(raw: dict[str, Any]) -> HistoryConfig:
    values: dict[str, Any] = {}
    known = sorted(HistoryConfig.__dataclass_fields__)
    for key, value in raw.items():
        name = key.replace("-", "_")
        where = f"{WHERE} {key}"
        if name not in known:
            raise ValidationError(where, "unknown setting", known)
        if name in ("enabled", "changed_lines") and not isinstance(value, bool):
            raise ValidationError(where, f"must be true or false, got {value!r}")
        if name == "max_commits" and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 1 <= value <= 1_000_000):
            raise ValidationError(where, f"must be a whole number from 1 to 1,000,000, got {value!r}")
        values[name] = value
    return HistoryConfig(**values)


def load_history_config(root: str | Path) -> HistoryConfig:
    """The validated settings of the project at ``root``; raises ValidationError on a bad table."""
    return config_from_dict(section(root, "history"))
