"""Settings of session memory, from ``[tool.autology.sessions]`` (or ``[sessions]`` in .autology/config.toml).

    [tool.autology.sessions]
    enabled = true                 # false: nothing is ingested, indexed or recalled
    boosts = { handoff = 0.08, session_chunk = 0.0 }   # added to a hit's score (then capped to [0, 1])
    capture_insights = false       # true: SessionEnd captures mined insights as needs_review nodes
    session_nodes = true           # false: SessionEnd does not write `session` nodes
    insight_threshold = 0.4        # minimum quality score of a mined insight
    transcripts_dir = "~/.claude/projects/-home-me-project"   # where `sessions ingest --all` looks
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.config import section
from autology_mcp.common.errors import ValidationError

DOC_TYPES = ("session_chunk", "handoff")
DEFAULT_BOOSTS = {"handoff": 0.08, "session_chunk": 0.0}
WHERE = "[tool.autology.sessions]"


@dataclass(frozen=True)
class SessionsConfig:
    enabled: bool = True
    boosts: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_BOOSTS))
    capture_insights: bool = False
    session_nodes: bool = True
    insight_threshold: float = 0.4
    transcripts_dir: str | None = None


def config_from_dict(raw: dict[str, Any]) -> SessionsConfig:
    values: dict[str, Any] = {}
    known = sorted(SessionsConfig.__dataclass_fields__)
    for key, value in raw.items():
        name = key.replace("-", "_")
        where = f"{WHERE} {key}"
        if name not in known:
            raise ValidationError(where, "unknown setting", known)
        if name in ("enabled", "capture_insights", "session_nodes"):
            if not isinstance(value, bool):
                raise ValidationError(where, f"must be true or false, got {value!r}")
        elif name == "boosts":
            if not isinstance(value, dict):
                raise ValidationError(where, "must be a table like { handoff = 0.08, session_chunk = 0.0 }")
            boosts = dict(DEFAULT_BOOSTS)
            for doc_type, boost in value.items():
                if doc_type not in DOC_TYPES:
                    raise ValidationError(f"{where}.{doc_type}", "unknown document type", DOC_TYPES)
                if isinstance(boost, bool) or not isinstance(boost, (int, float)) or not -1.0 <= boost <= 1.0:
                    raise ValidationError(f"{where}.{doc_type}", f"must be a number from -1 to 1, got {boost!r}")
                boosts[doc_type] = float(boost)
            value = boosts
        elif name == "insight_threshold":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValidationError(where, f"must be a number from 0 to 1, got {value!r}")
            value = float(value)
        elif name == "transcripts_dir":
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(where, "must be a folder path (a non-empty string)")
        values[name] = value
    return SessionsConfig(**values)


def load_sessions_config(root: str | Path) -> SessionsConfig:
    """The validated settings of the project at ``root``; raises ValidationError on a bad table."""
    return config_from_dict(section(root, "sessions"))
