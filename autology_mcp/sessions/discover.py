"""Where Claude Code keeps a project's transcripts: ``~/.claude/projects/<encoded project path>/``.

Claude Code names the folder after the project's absolute path with every character that is not an
ASCII letter or digit replaced by ``-`` (``/home/me/my_app`` → ``-home-me-my-app``); the base is
``$CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``. Very long paths may be shortened, so when the
exact folder is missing, the folder whose transcripts record this project as their ``cwd`` is used.
``[tool.autology.sessions] transcripts_dir`` overrides all of this.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from autology_mcp.common.errors import ValidationError

PEEK_LINES = 30


def claude_projects_dir() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def encode_project_path(root: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(Path(root).resolve()))


def _recorded_cwds(folder: Path):
    """The first ``cwd`` recorded in each of the folder's first 5 transcripts (within PEEK_LINES lines)."""
    for transcript in sorted(folder.glob("*.jsonl"))[:5]:
        try:
            with transcript.open(encoding="utf-8", errors="replace") as handle:
                for _, line in zip(range(PEEK_LINES), handle):
                    try:
                        cwd = json.loads(line).get("cwd")
                    except (ValueError, AttributeError):
                        continue
                    if isinstance(cwd, str):
                        yield cwd
                        break
        except OSError:
            continue


def _records_cwd(folder: Path, root: str) -> bool:
    """Some transcript of the folder was started in ``root``."""
    return any(cwd.rstrip("/") == root for cwd in _recorded_cwds(folder))


def transcripts_dir(root: Path, configured: str | None = None) -> Path:
    """The folder of the project's transcripts; ValidationError (saying where it looked) when there is none."""
    root = Path(root).resolve()
    if configured:
        folder = Path(configured).expanduser()
        folder = folder if folder.is_absolute() else root / folder
        if not folder.is_dir():
            raise ValidationError("[tool.autology.sessions] transcripts_dir", f"{folder} is not a folder")
        return folder
    projects = claude_projects_dir()
    exact = projects / encode_project_path(root)
    if exact.is_dir():
        return exact
    encoded = encode_project_path(root)
    try:
        candidates = sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        candidates = []
    prefixed = [p for p in candidates if len(encoded) > 100 and p.name.startswith(encoded[:100])]
    for folder in prefixed + [p for p in candidates if p not in prefixed]:
        if _records_cwd(folder, str(root)):
            return folder
    raise ValidationError(
        "transcripts",
        f"no Claude Code transcripts for {root} (looked for {exact}); "
        "set [tool.autology.sessions] transcripts_dir or pass transcript paths",
    )


def subfolder_dirs(root: Path) -> list[Path]:
    """Transcript folders of sessions started in a folder below the project (``claude`` run in ``src/``).

    Their names start with the project's encoded path and ``-``; as that is ambiguous (``/a/b-c`` and
    ``/a/b/c`` encode alike), a folder counts only if its transcripts record a cwd inside the project.
    """
    root = Path(root).resolve()
    prefix = encode_project_path(root) + "-"
    try:
        candidates = sorted(p for p in claude_projects_dir().iterdir() if p.is_dir() and p.name.startswith(prefix))
    except OSError:
        return []
    return [p for p in candidates if _records_cwd_under(p, str(root))]


def _records_cwd_under(folder: Path, root: str) -> bool:
    """The folder's first transcript that records a cwd was started in a folder below ``root``."""
    first = next(_recorded_cwds(folder), None)
    return first is not None and first.startswith(root.rstrip("/") + "/")


def list_transcripts(folder: Path) -> list[Path]:
    """The session transcripts of a folder (``*.jsonl`` directly in it; subagent logs below are not sessions)."""
    return sorted(p for p in Path(folder).glob("*.jsonl") if p.is_file())
