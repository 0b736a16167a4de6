"""Session files: ``.autology/sessions/<session id>.jsonl``, the source of truth of session memory.

One JSONL file per session, every string redacted before it is written:

1. a header ``{"kind": "header", "format": 1, "session_id", "title", "transcript", "size", "mtime_ns",
   "offset", "sha256", "state": {...}}``: where the transcript is, how much of it was ingested (bytes
   ``[0, offset)`` hashing to ``sha256``) and the parser's state to continue from;
2. one ``{"kind": "turn", "n", "role", "ts", "text"}`` per kept turn;
3. a ``{"kind": "handoff", "text"}`` line: the session's summary.

The files are private: ``.autology/.gitignore`` ignores ``sessions/`` (added to an existing store's
.gitignore when missing). The search index in ``cache/`` is rebuilt from them alone, so nothing is
lost when Claude Code cleans up its transcripts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.common.fsutil import WriteLock, atomic_write
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.sessions.paths import SESSIONS_DIR, sessions_dir
from autology_mcp.sessions.redact import redact, redact_value
from autology_mcp.sessions.transcript import ParseState, Turn

FORMAT = 1
GITIGNORE_LINE = "sessions/"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def session_lock(root: Path) -> WriteLock:
    """Serialises ingests of one project (a directory lock on ``.autology/sessions/``)."""
    return WriteLock(sessions_dir(root), directory=True)


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not _SAFE_ID.match(session_id) or session_id.startswith("."):
        raise ValidationError("session_id", f"must be letters, digits, '.', '_' or '-' (max 128), got {session_id!r}")
    return session_id


def session_file(root: Path, session_id: str) -> Path:
    return sessions_dir(root) / f"{check_session_id(session_id)}.jsonl"


@dataclass
class SessionRecord:
    session_id: str
    transcript: str = ""
    size: int = 0
    mtime_ns: int = 0
    offset: int = 0
    sha256: str = ""
    complete: bool = True  # False: the last ingest step stopped at its byte limit before the end
    state: ParseState = field(default_factory=ParseState)
    turns: list[Turn] = field(default_factory=list)
    handoff: str = ""

    @property
    def title(self) -> str:
        return redact(self.state.title())

    def header(self) -> dict[str, Any]:
        return {
            "kind": "header",
            "format": FORMAT,
            "session_id": self.session_id,
            "title": self.title,
            "transcript": self.transcript,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "offset": self.offset,
            "sha256": self.sha256,
            "complete": self.complete,
            "state": self.state.to_dict(),
        }


def render(record: SessionRecord) -> str:
    """The file's text, every string in it redacted (turn texts already are: the parser redacts them)."""
    lines = [json.dumps(redact_value(record.header()), ensure_ascii=False, separators=(",", ":"))]
    for turn in record.turns:
        row = {"kind": "turn", "n": turn.n, "role": turn.role, "ts": turn.timestamp, "text": turn.text}
        lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
    if record.handoff:
        lines.append(json.dumps({"kind": "handoff", "text": redact(record.handoff)}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def parse(text: str, where: str = "session file") -> SessionRecord:
    """A record from a session file's text; a damaged line is skipped, a missing header is an error."""
    record: SessionRecord | None = None
    for line in text.split("\n"):  # not splitlines(): U+2028 or U+0085 inside a string is not a line break
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        kind = row.get("kind")
        if kind == "header" and record is None:
            if row.get("format") != FORMAT or not isinstance(row.get("session_id"), str):
                raise StorageError(where, f"unsupported session file format {row.get('format')!r}")
            state = row.get("state") if isinstance(row.get("state"), dict) else {}
            record = SessionRecord(
                session_id=row["session_id"],
                transcript=str(row.get("transcript") or ""),
                size=int(row.get("size") or 0),
                mtime_ns=int(row.get("mtime_ns") or 0),
                offset=int(row.get("offset") or 0),
                sha256=str(row.get("sha256") or ""),
                complete=row.get("complete") is not False,
                state=ParseState.from_dict(state),
            )
        elif record is not None and kind == "turn":
            try:
                record.turns.append(Turn(int(row["n"]), str(row["role"]), str(row["text"]), str(row.get("ts") or "")))
            except (KeyError, TypeError, ValueError):
                continue
        elif record is not None and kind == "handoff" and isinstance(row.get("text"), str):
            record.handoff = row["text"]
    if record is None:
        raise StorageError(where, "not a session file (no header line)")
    return record


def read_session(path: Path) -> SessionRecord:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    return parse(text, str(path))


def load_session(root: Path, session_id: str) -> SessionRecord | None:
    try:
        return read_session(session_file(root, session_id))
    except FileNotFoundError:
        return None


def load_header(root: Path, session_id: str) -> SessionRecord | None:
    """The session's header only (no turns): enough to tell whether its transcript changed."""
    path = session_file(root, session_id)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    try:
        return parse(first, str(path))
    except StorageError:
        return None


def write_session(root: Path, record: SessionRecord) -> Path:
    path = session_file(root, record.session_id)
    ensure_gitignore(root)
    atomic_write(path, render(record), durable=False)
    return path


def session_files(root: Path) -> list[Path]:
    """Every session file of the project (none when the folder does not exist)."""
    directory = sessions_dir(root)
    try:
        return sorted(p for p in directory.iterdir() if p.suffix == ".jsonl" and not p.name.startswith("."))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(str(directory), exc.strerror or str(exc)) from exc


FORGOTTEN = ".forgotten"  # session ids never to ingest again, one a line (hidden: not a session file)


def forgotten_ids(root: Path) -> set[str]:
    try:
        text = (sessions_dir(root) / FORGOTTEN).read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise StorageError(str(sessions_dir(root) / FORGOTTEN), exc.strerror or str(exc)) from exc
    return {line.strip() for line in text.splitlines() if line.strip()}


def forget_session(root: Path, session_id: str) -> bool:
    """Delete the session's file and keep its id out of later ingests; True when a file was deleted.

    The caller holds the session lock. The session's node, if any, is left alone (it is a node like
    any other: ``autology delete``)."""
    from autology_mcp.common.fsutil import remove_file

    path = session_file(root, session_id)
    existed = path.exists()
    ids = forgotten_ids(root) | {session_id}
    atomic_write(sessions_dir(root) / FORGOTTEN, "".join(f"{i}\n" for i in sorted(ids)), durable=False)
    remove_file(path)
    return existed


def ensure_gitignore(root: Path) -> None:
    """``.autology/.gitignore`` lists ``sessions/`` (session memory is private to this machine)."""
    path = ProjectPaths(Path(root)).base / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        from autology_mcp.knowledge.store import GITIGNORE

        text = GITIGNORE
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    if any(line.strip() in (GITIGNORE_LINE, SESSIONS_DIR, "/" + GITIGNORE_LINE) for line in text.splitlines()):
        if path.exists():
            return
    else:
        text = text + ("" if text.endswith("\n") or not text else "\n")
        text += "# Session memory: redacted transcripts of this machine's sessions (private, never committed)\n"
        text += GITIGNORE_LINE + "\n"
    atomic_write(path, text, durable=False)
