"""Where Claude Code keeps a project's transcripts: ``~/.claude/projects/<encoded project path>/``.

Claude Code names the folder after the project's absolute path with every character that is not an
ASCII letter or digit replaced by ``-`` (``/home/me/my_app`` → ``-home-me-my-app``); the base is
``$CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``. Very long paths may be shortened, so when the
exact folder is missing, the folder whose transcripts record this project as their ``cwd`` is used.
``[tool.autology.sessions] transcripts_dir`` overrides all of this.

The other agents keep every project's sessions in one place; a session belongs to the project when it
was started in the project or a folder below it:

- Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``~/.codex``), its ``session_meta``
  line records the ``cwd``;
- Gemini CLI: ``~/.gemini/tmp/<short name>/chats/session-*.jsonl`` (the home is ``$GEMINI_CLI_HOME``
  when set), ``~/.gemini/projects.json`` maps each project path to its short name (older versions named
  the folder after the SHA-256 of the path); a ``--resume`` leaves a stub file under the same session
  id, so only the largest file of a session is taken;
- Copilot CLI: ``$COPILOT_HOME/session-state/<session id>/events.jsonl`` (``~/.copilot``), the
  ``cwd:`` of ``workspace.yaml`` beside it (or the ``session.start`` event's ``context.cwd``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
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


# ------------------------------------------------------------------ the other agents

AGENTS = ("claude-code", "codex", "gemini", "copilot")
FIRST_LINE_MAX = 1 << 20  # a Codex session_meta line carries the base instructions (tens of KB)


def codex_sessions_dir() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".codex") / "sessions"


def gemini_dir() -> Path:
    base = os.environ.get("GEMINI_CLI_HOME")
    return (Path(base).expanduser() if base else Path.home()) / ".gemini"


def gemini_tmp_dir() -> Path:
    return gemini_dir() / "tmp"


def copilot_sessions_dir() -> Path:
    base = os.environ.get("COPILOT_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".copilot") / "session-state"


def agent_transcript_dirs() -> list[Path]:
    """Where each agent keeps its transcripts (a hook ingests only a transcript below one of them)."""
    return [claude_projects_dir(), codex_sessions_dir(), gemini_tmp_dir(), copilot_sessions_dir()]


def _roots(root: Path) -> set[str]:
    return {os.path.normpath(str(root)), str(Path(root).resolve())}


def _in_project(cwd: object, roots: set[str]) -> bool:
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return False
    cwd = os.path.normpath(cwd)
    return any(cwd == r or cwd.startswith(r.rstrip("/") + "/") for r in roots)


def _first_rows(path: Path, lines: int = PEEK_LINES) -> Iterator[dict]:
    """The JSON objects of a file's first ``lines`` lines (each read up to FIRST_LINE_MAX bytes)."""
    try:
        with path.open("rb") as handle:
            for _ in range(lines):
                line = handle.readline(FIRST_LINE_MAX)
                if not line:
                    return
                try:
                    row = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(row, dict):
                    yield row
    except OSError:
        return


def codex_transcripts(root: Path) -> list[Path]:
    """This project's Codex rollouts: those whose ``session_meta`` cwd is the project or below it."""
    roots = _roots(root)
    found = []
    for rollout in sorted(codex_sessions_dir().rglob("rollout-*.jsonl")):
        for row in _first_rows(rollout, 5):
            payload = row.get("payload")
            if row.get("type") == "session_meta" and isinstance(payload, dict):
                if _in_project(payload.get("cwd"), roots):
                    found.append(rollout)
                break
    return found


def _gemini_folders(root: Path) -> dict[Path, set[str]]:
    """The chats folders of the project (and of its subfolders), each with the hashes of their paths."""
    roots = _roots(root)
    projects: dict = {}
    try:
        projects = json.loads((gemini_dir() / "projects.json").read_text(encoding="utf-8")).get("projects") or {}
    except (OSError, ValueError, AttributeError):
        pass
    folders: dict[Path, set[str]] = {}
    for path, short in projects.items() if isinstance(projects, dict) else []:
        if isinstance(short, str) and short and "/" not in short and short not in (".", "..") and _in_project(path, roots):
            folders.setdefault(gemini_tmp_dir() / short / "chats", set()).add(hashlib.sha256(path.encode()).hexdigest())
    for path in roots:  # the folder older versions named after the hash of the path
        digest = hashlib.sha256(path.encode()).hexdigest()
        folders.setdefault(gemini_tmp_dir() / digest / "chats", set()).add(digest)
    return folders


def gemini_transcripts(root: Path) -> list[Path]:
    """This project's Gemini CLI chats; of the files of one session (a resume leaves a stub), the largest."""
    best: dict[str, tuple[int, Path]] = {}
    for folder, hashes in _gemini_folders(root).items():
        for chat in sorted(folder.glob("session-*.jsonl")):
            header = next(_first_rows(chat, 1), {})
            if isinstance(header.get("projectHash"), str) and header["projectHash"] not in hashes:
                continue  # another project's chats under a reused short name
            session = header.get("sessionId") if isinstance(header.get("sessionId"), str) else str(chat)
            try:
                size = chat.stat().st_size
            except OSError:
                continue
            if session not in best or size > best[session][0]:
                best[session] = (size, chat)
    return sorted(path for _, path in best.values())


_YAML_CWD = re.compile(r"^cwd:[ \t]*(?P<value>.+?)[ \t]*$", re.MULTILINE)


def _copilot_cwd(folder: Path) -> str | None:
    try:
        text = (folder / "workspace.yaml").read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        text = ""
    found = _YAML_CWD.search(text)
    if found:
        return found.group("value").strip("'\"")
    for row in _first_rows(folder / "events.jsonl", 5):
        data = row.get("data")
        if row.get("type") == "session.start" and isinstance(data, dict) and isinstance(data.get("context"), dict):
            cwd = data["context"].get("cwd")
            return cwd if isinstance(cwd, str) else None
    return None


def copilot_transcripts(root: Path) -> list[Path]:
    """This project's Copilot CLI sessions: those whose workspace cwd is the project or below it."""
    roots = _roots(root)
    try:
        folders = sorted(p for p in copilot_sessions_dir().iterdir() if p.is_dir())
    except OSError:
        return []
    return [f / "events.jsonl" for f in folders if (f / "events.jsonl").is_file() and _in_project(_copilot_cwd(f), roots)]


def agent_transcripts(root: Path, agent: str) -> list[Path]:
    """The project's transcripts of one of the agents other than Claude Code."""
    finders = {"codex": codex_transcripts, "gemini": gemini_transcripts, "copilot": copilot_transcripts}
    return finders[agent](root)
