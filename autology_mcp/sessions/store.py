"""Session files: ``.autology/sessions/<session id>.jsonl``, the source of truth of session memory.

One JSONL file per session, every string redacted before it is written. Format 2 is append-only,
so an ingest step costs the same however long the session already is (issue 29):

1. a header ``{"kind": "header", "format": 2, "session_id", "file_id", "transcript"}``, written once
   (``file_id`` is new each time the file is written whole, so the index can tell a rewrite from growth);
2. per ingest step, its turns ``{"kind": "turn", "n", "role", "ts", "text"}`` and then a checkpoint
   ``{"kind": "checkpoint", "lines", "title", "transcript", "size", "mtime_ns", "dev", "ino", "offset",
   "sha256", "complete", "state", "summary", "handoff"}``: how much of the transcript is ingested
   (bytes ``[0, offset)``, fingerprinted by ``sha256``), the parser's state and the running summary
   to go on from, and the handoff. ``lines`` says how many turn lines before it are the step's.

What counts is what a checkpoint closes: a step writes its turns and its checkpoint in one append,
so a hook killed mid-write leaves at most a partial line and turns with no checkpoint after the last
one; readers ignore them, and the next step first ends the partial line, then appends its own turns
and checkpoint (its ``lines`` tells which turn lines are its). Nothing is ever truncated or
rewritten in place: a reader never sees a mix of two writes. A file is written whole (atomically)
only when a transcript is ingested from its start, or an old file is converted.

Format 1 (one header holding the state, the turns, one handoff line; the file rewritten at every
step) is still read, and converted to format 2 at the next ingest step that appends to it.

The files are private: ``.autology/.gitignore`` ignores ``sessions/`` (added to an existing store's
.gitignore when missing). The search index in ``cache/`` is rebuilt from them alone, so nothing is
lost when Claude Code cleans up its transcripts.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.common.fsutil import WriteLock, atomic_write
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.sessions.paths import SESSIONS_DIR, sessions_dir
from autology_mcp.common.redact import redact, redact_value
from autology_mcp.sessions.summary import SessionSummary
from autology_mcp.sessions.transcript import ParseState, Turn

FORMAT = 2
READABLE_FORMATS = (1, 2)
GITIGNORE_LINE = "sessions/"
CHECKPOINT_MARK = b'{"kind":"checkpoint"'
TAIL_BLOCK = 64 * 1024
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def session_lock(root: Path) -> WriteLock:
    """Serialises ingests of one project (a directory lock on ``.autology/sessions/``)."""
    return WriteLock(sessions_dir(root), directory=True)


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not _SAFE_ID.match(session_id) or session_id.startswith("."):
        raise ValidationError("session_id", f"must be letters, digits, '.', '_' or '-' (max 128), got {session_id!r}")
    return session_id


PREFIX_MIN = 6  # as for node ids: a shorter start names too many sessions to be a person's choice


def resolve_session_id(root: Path, text: str) -> str:
    """The stored session a person's argument names: its id, or a unique start of one (6+ characters,
    as node ids take). Returns ``text`` itself when it names no stored session (the caller decides what
    that means); a start shared by several stored sessions is refused, naming them."""
    check_session_id(text)
    if session_file(root, text).is_file() or len(text) < PREFIX_MIN:
        return text
    folder = sessions_dir(root)
    found = sorted(p.name[: -len(".jsonl")] for p in folder.iterdir()
                   if p.name.startswith(text) and p.name.endswith(".jsonl")) if folder.is_dir() else []
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        raise ValidationError("session_id", f"{text!r} starts {len(found)} sessions ({shown}): give more of the id")
    return found[0] if found else text


def session_file(root: Path, session_id: str) -> Path:
    return sessions_dir(root) / f"{check_session_id(session_id)}.jsonl"


@dataclass
class SessionRecord:
    session_id: str
    transcript: str = ""
    size: int = 0
    mtime_ns: int = 0
    offset: int = 0
    sha256: str = ""  # format 2: the fingerprint of the transcript's first ``offset`` bytes; format 1: their SHA-256
    complete: bool = True  # False: the last ingest step stopped at its byte limit before the end
    state: ParseState = field(default_factory=ParseState)
    turns: list[Turn] = field(default_factory=list)  # empty in a record loaded by load_header
    handoff: str = ""
    dev: int = 0  # the transcript's identity (st_dev, st_ino) when it was read
    ino: int = 0
    summary: SessionSummary | None = None  # the running summary (None in a format 1 record: computed from the turns)
    format: int = FORMAT  # of the file on disk
    file_id: str = ""  # format 2: this file's generation (new at every whole write)
    end: int = 0  # bytes of the session file up to the end of its last checkpoint (0: not on disk)

    @property
    def title(self) -> str:
        return redact(self.state.title())

    def header(self) -> dict[str, Any]:
        """The first line of a format 2 file."""
        return {"kind": "header", "format": FORMAT, "session_id": self.session_id, "file_id": self.file_id,
                "transcript": self.transcript}

    def checkpoint(self, lines: int) -> dict[str, Any]:
        """The checkpoint line closing a step of ``lines`` turn lines (the summary is built from
        redacted turns, and one_line redacts again: it is not redacted a third time)."""
        row = redact_value({
            "kind": "checkpoint", "lines": lines, "title": self.title, "transcript": self.transcript,
            "size": self.size, "mtime_ns": self.mtime_ns, "dev": self.dev, "ino": self.ino, "offset": self.offset,
            "sha256": self.sha256, "complete": self.complete, "state": self.state.to_dict(),
        })
        row["summary"] = self.running_summary().to_dict()
        row["handoff"] = redact(self.handoff)
        return row

    def running_summary(self) -> SessionSummary:
        if self.summary is None:
            self.summary = SessionSummary.of(self.turns, self.session_id)
        return self.summary


def _dumps(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def _turn_line(turn: Turn) -> str:
    return _dumps({"kind": "turn", "n": turn.n, "role": turn.role, "ts": turn.timestamp, "text": turn.text})


def render(record: SessionRecord) -> str:
    """The whole format 2 file: header, every turn, one checkpoint (turn texts are already redacted:
    the parser redacts them)."""
    lines = [_dumps(redact_value(record.header()))]
    lines += [_turn_line(turn) for turn in record.turns]
    lines.append(_dumps(record.checkpoint(len(record.turns))))
    return "\n".join(lines) + "\n"


def _turn(row: dict[str, Any]) -> Turn | None:
    try:
        return Turn(int(row["n"]), str(row["role"]), str(row["text"]), str(row.get("ts") or ""))
    except (KeyError, TypeError, ValueError):
        return None


def _record_from_header(row: dict[str, Any], where: str) -> SessionRecord:
    version = row.get("format")
    if version not in READABLE_FORMATS or not isinstance(row.get("session_id"), str):
        raise StorageError(where, f"unsupported session file format {version!r}")
    record = SessionRecord(session_id=row["session_id"], transcript=str(row.get("transcript") or ""), format=version)
    if version == 1:
        state = row.get("state") if isinstance(row.get("state"), dict) else {}
        record.size = int(row.get("size") or 0)
        record.mtime_ns = int(row.get("mtime_ns") or 0)
        record.offset = int(row.get("offset") or 0)
        record.sha256 = str(row.get("sha256") or "")
        record.complete = row.get("complete") is not False
        record.state = ParseState.from_dict(state)
    else:
        record.file_id = str(row.get("file_id") or "")
        record.complete = False  # until a checkpoint says otherwise
    return record


def apply_checkpoint(record: SessionRecord, row: dict[str, Any]) -> None:
    """The record as of this checkpoint (its turns aside)."""
    state = row.get("state") if isinstance(row.get("state"), dict) else {}
    summary = row.get("summary") if isinstance(row.get("summary"), dict) else {}
    record.transcript = str(row.get("transcript") or record.transcript)
    for name in ("size", "mtime_ns", "dev", "ino", "offset"):
        try:
            setattr(record, name, int(row.get(name) or 0))
        except (TypeError, ValueError):
            setattr(record, name, 0)
    record.sha256 = str(row.get("sha256") or "")
    record.complete = row.get("complete") is not False
    record.state = ParseState.from_dict(state)
    record.summary = SessionSummary.from_dict(summary, record.session_id)
    record.handoff = row.get("handoff") if isinstance(row.get("handoff"), str) else ""


def is_checkpoint(row: Any) -> bool:
    return isinstance(row, dict) and row.get("kind") == "checkpoint"


def step_turns(pending: list[Turn], row: dict[str, Any], after: int) -> list[Turn]:
    """The turns a checkpoint closes: the last ``lines`` turn lines before it (earlier ones since the
    previous checkpoint are those of a killed step), numbered after ``after``, in increasing order."""
    try:
        lines = max(0, int(row.get("lines") or 0))
    except (TypeError, ValueError):
        lines = 0
    kept: list[Turn] = []
    for turn in pending[max(0, len(pending) - lines):] if lines else []:
        if turn.n > after and (not kept or turn.n > kept[-1].n):
            kept.append(turn)
    return kept


Step = tuple[list[Turn], dict[str, Any], int]  # a step's turns, its checkpoint row, the byte after the checkpoint


def scan_lines(data: bytes, position: int, after: int) -> tuple[list[Step], dict[str, Any] | None]:
    """The steps a format 2 file holds from byte ``position`` (where ``data`` starts, at a line start):
    for each checkpoint, the turns it closes, its row and the byte after it; and the header row if
    ``data`` holds it. A last line without its newline is being written (or was cut): ignored.
    ``after`` is the number of the last turn before ``position`` (-1: none)."""
    steps: list[Step] = []
    header = None
    pending: list[Turn] = []
    lines = data.split(b"\n")
    lines.pop()  # the part after the last newline: '' or an unfinished line
    for line in lines:
        position += len(line) + 1
        try:
            row = json.loads(line)
        except ValueError:  # invalid JSON or UTF-8: skipped
            continue
        if not isinstance(row, dict):
            continue
        kind = row.get("kind")
        if kind == "turn":
            turn = _turn(row)
            if turn is not None:
                pending.append(turn)
        elif kind == "checkpoint":
            turns = step_turns(pending, row, after)
            if turns:
                after = turns[-1].n
            steps.append((turns, row, position))
            pending = []
        elif kind == "header" and header is None and not steps and not pending:
            header = row
    return steps, header


def _parse_format1(text: str, record: SessionRecord) -> SessionRecord:
    for line in text.split("\n")[1:]:  # not splitlines(): U+2028 or U+0085 inside a string is not a line break
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        if row.get("kind") == "turn":
            turn = _turn(row)
            if turn is not None:
                record.turns.append(turn)
        elif row.get("kind") == "handoff" and isinstance(row.get("text"), str):
            record.handoff = row["text"]
    return record


def _first_row(data: bytes | str) -> dict[str, Any] | None:
    line = data.split(b"\n" if isinstance(data, bytes) else "\n", 1)[0]
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) and row.get("kind") == "header" else None


def parse_bytes(data: bytes, where: str = "session file") -> SessionRecord:
    """A record from a session file's bytes; a damaged line is skipped, a missing header is an error."""
    row = _first_row(data)
    if row is None:
        raise StorageError(where, "not a session file (no header line)")
    record = _record_from_header(row, where)
    if record.format == 1:
        record.end = len(data)
        return _parse_format1(data.decode("utf-8", errors="replace"), record)
    first_end = data.find(b"\n") + 1
    steps, _ = scan_lines(data[first_end:], first_end, -1)
    for turns, checkpoint, end in steps:
        record.turns += turns
        apply_checkpoint(record, checkpoint)
        record.end = end
    if not steps:
        raise StorageError(where, "a session file without a checkpoint (its first write was cut)")
    return record


def parse(text: str, where: str = "session file") -> SessionRecord:
    """A record from a session file's text (see :func:`parse_bytes`)."""
    return parse_bytes(text.encode("utf-8"), where)


def read_session(path: Path) -> SessionRecord:
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    return parse_bytes(data, str(path))


def load_session(root: Path, session_id: str) -> SessionRecord | None:
    """The whole session (every turn): for showing it or converting it, never in an ingest step."""
    try:
        return read_session(session_file(root, session_id))
    except FileNotFoundError:
        return None


def last_checkpoint(handle, size: int) -> tuple[dict[str, Any], int] | None:
    """The last complete checkpoint line of an open format 2 file and the byte after it, read
    backwards from the end in blocks (what follows it, a killed step's lines, is passed over)."""
    buffer = b""
    position = size
    limit = 0  # candidates are looked for in buffer[:limit]; what is after it was looked at
    while position > 0:
        start = max(0, position - TAIL_BLOCK)
        handle.seek(start)
        block = handle.read(position - start)
        buffer = block + buffer
        position = start
        limit += len(block)
        while True:
            at = buffer.rfind(b"\n" + CHECKPOINT_MARK, 0, limit)
            if at < 0:
                break
            line_end = buffer.find(b"\n", at + 1)
            if line_end >= 0:
                try:
                    row = json.loads(buffer[at + 1 : line_end])
                except ValueError:
                    row = None
                if is_checkpoint(row):
                    return row, position + line_end + 1
            limit = at  # an unfinished (or damaged) checkpoint: look further back
    return None


def load_header(root: Path, session_id: str) -> SessionRecord | None:
    """The session as of its last checkpoint, without its turns: read from the file's first line and
    its tail, so it costs the same however long the session is. None when there is no file or it is
    unreadable (it is then ingested again from the start)."""
    path = session_file(root, session_id)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            row = _first_row(handle.readline())
            if row is None:
                return None
            try:
                record = _record_from_header(row, str(path))
            except StorageError:
                return None
            if record.format == 1:
                record.end = size
                return record
            found = last_checkpoint(handle, size)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    if found is None:
        return None
    apply_checkpoint(record, found[0])
    record.end = found[1]
    return record


def load_overview(root: Path, session_id: str) -> SessionRecord | None:
    """The session's state and running summary (``summary`` set, ``turns`` empty) for its handoff and node:
    from the checkpoint of a format 2 file; a format 1 file is read whole once to compute the summary."""
    record = load_header(root, session_id)
    if record is not None and record.format == 1:
        record = load_session(root, session_id)
        if record is not None:
            record.running_summary()
            record.turns = []
    return record


def write_session(root: Path, record: SessionRecord) -> Path:
    """Write the whole file (a new generation: a new ``file_id``), atomically."""
    path = session_file(root, record.session_id)
    ensure_gitignore(root)
    record.format = FORMAT
    record.file_id = secrets.token_hex(8)
    text = render(record)
    atomic_write(path, text, durable=False)
    record.end = len(text.encode("utf-8"))
    return path


def append_step(root: Path, record: SessionRecord, turns: list[Turn]) -> Path:
    """Append one step (its new turns, then its checkpoint) to the format 2 file ``record`` was loaded
    from, in one write. The caller holds the session lock. A partial line a killed step left at the
    end is ended first (readers skip it; the checkpoint's ``lines`` passes over its turns)."""
    path = session_file(root, record.session_id)
    body = "".join(_turn_line(turn) + "\n" for turn in turns) + _dumps(record.checkpoint(len(turns))) + "\n"
    data = body.encode("utf-8")
    try:
        with open(path, "r+b") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > 0:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    data = b"\n" + data
            handle.seek(size)
            handle.write(data)
        record.end = size + len(data)
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    try:
        os.utime(sessions_dir(root))  # an append leaves the folder's time alone: the index's quick check looks at it
    except OSError:
        pass  # (then the index sees the step at the next change of the folder, or in a new process)
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
