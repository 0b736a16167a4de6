"""Ingest a coding agent's transcript (Claude Code, Codex, Gemini CLI, Copilot CLI: see
:mod:`~autology_mcp.sessions.transcript`) into the project's session memory, incrementally and idempotently.

- Unchanged transcript (same size and modification time, or nothing new): nothing is written.
- Grown transcript whose first ``offset`` bytes are still those ingested: only the new complete
  lines are parsed (a partly written last line waits for the next ingest), and the parser continues
  from its saved state, so turn numbers and chunk ids of the old part do not change.
- Anything else (rewritten, truncated, replaced by another file, never seen): the whole transcript
  is parsed again; but another file of the session without a single turn (the stub a Gemini CLI
  ``--resume`` leaves beside the chat it goes on) leaves the stored session as it is.
- A transcript without a single turn that was never stored (an agent opened and closed with no prompt)
  is not stored (mode ``"empty"``): it is read again, whole, once it has turns.
- One ingest step reads at most :data:`STEP_BYTES` (8 MiB: at worst, all of it text to redact,
  about 2.5 s on a 2-core machine), so the SessionEnd hook always finishes within its timeout; the
  checkpoint then says ``"complete": false`` and the next step goes on from the offset.
  ``autology sessions ingest`` runs the steps to the end in one pass, holding one step's bytes at a
  time. A line longer than a step is skipped as malformed, never held in memory.
- Every step costs the same however long the session already is (issue 29): it appends its turns
  and a checkpoint to the session file (never rewrites it: :mod:`~autology_mcp.sessions.store`),
  updates the running summary the handoff is built from, and the index takes in only the new turns.
  The prefix is not hashed again: the checkpoint keeps the transcript's identity (device, inode) and
  a :func:`fingerprint` of its first ``offset`` bytes, a SHA-256 of bounded parts of them (the first
  and the last MiB before the offset, 16 samples of 64 KiB between), about 3 MB read whatever the size.
- Only files that look like transcripts are read: a regular file whose text starts a
  JSON object (``/etc/shadow`` or ``/proc/self/environ`` named as a transcript is refused).

Every string is redacted before it reaches the session file or the index.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.sessions.handoff import handoff_of
from autology_mcp.sessions.store import (
    FORMAT,
    SessionRecord,
    append_step,
    forgotten_ids,
    load_header,
    load_session,
    session_lock,
    write_session,
)
from autology_mcp.sessions.transcript import parse_lines

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


STEP_BYTES = 8 * 1024 * 1024


@dataclass
class IngestResult:
    session_id: str
    transcript: str
    mode: str  # "unchanged" | "appended" | "full" | "forgotten" (skipped: `autology sessions forget`) | "empty"
    complete: bool = True  # False: the step stopped at its byte limit; ingest again to go on
    new_turns: int = 0
    turns: int = 0
    malformed: int = 0
    bytes_read: int = 0
    title: str = ""
    path: str = ""
    indexed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_CODEX_ROLLOUT = re.compile(r"^rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_GEMINI_CHAT = re.compile(r"^session-\d{4}-\d\d-\d\dT\d\d-\d\d-[0-9A-Za-z_-]{1,8}$")
HEADER_MAX = 64 * 1024


def _safe(session_id: Any) -> bool:
    return isinstance(session_id, str) and bool(_SAFE_ID.match(session_id)) and not session_id.startswith(".")


def gemini_session_id(transcript: Path) -> str:
    """The ``sessionId`` of a Gemini CLI chat's header line ("" when it has none)."""
    try:
        with open(transcript, "rb") as handle:
            row = json.loads(handle.readline(HEADER_MAX) or b"null")
    except (OSError, ValueError, RecursionError):
        return ""
    found = row.get("sessionId") if isinstance(row, dict) and isinstance(row.get("projectHash"), str) else None
    return found if _safe(found) else ""


def session_id_for(transcript: Path) -> str:
    """The session id a transcript's path gives, the one the agent's hooks name it by: Claude Code names a
    transcript ``<session id>.jsonl``, Codex ``rollout-<time>-<session id>.jsonl``, Copilot
    ``<session id>/events.jsonl``; a Gemini chat (``session-<time>-<8 characters of the id>.jsonl``)
    holds its id in its header. An unusual name gets a stable hashed id."""
    stem = transcript.stem
    if transcript.name == "events.jsonl" and _safe(transcript.parent.name):
        return transcript.parent.name
    rollout = _CODEX_ROLLOUT.match(stem)
    if rollout:
        return rollout.group(1)
    if _GEMINI_CHAT.match(stem):
        return gemini_session_id(transcript) or stem
    if _safe(stem):
        return stem
    return "t-" + hashlib.sha256(str(transcript).encode()).hexdigest()[:24]


BLOCK = 1 << 20


def _open(path: Path):
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise ValidationError("transcript", f"{path} does not exist") from None
    except IsADirectoryError:
        raise ValidationError("transcript", f"{path} is a folder, not a transcript (.jsonl)") from None
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc


def _hash_prefix(handle, length: int) -> tuple[hashlib._Hash, bool]:
    """SHA-256 of the first ``length`` bytes, read in blocks; False when the file is shorter
    (checks the prefix of a format 1 session file once, before converting it)."""
    digest = hashlib.sha256()
    remaining = length
    while remaining > 0:
        block = handle.read(min(BLOCK, remaining))
        if not block:
            return digest, False
        digest.update(block)
        remaining -= len(block)
    return digest, True


WINDOW = 1 << 20
SAMPLES = 16
SAMPLE_BYTES = 64 * 1024


def fingerprint(fd: int, offset: int) -> str:
    """A SHA-256 of the first ``offset`` bytes of a file, read in bounded parts: the offset, the first
    and the last :data:`WINDOW` bytes before it, and :data:`SAMPLES` blocks of :data:`SAMPLE_BYTES`
    spread between them ("" when the file is shorter). A transcript up to 2 MiB is hashed whole;
    beyond, a change that leaves all of these parts alike (and the file's inode) goes unseen."""
    digest = hashlib.sha256(f"{offset}\n".encode())
    spans = [(0, min(offset, WINDOW))]
    inner = offset - 2 * WINDOW
    if inner > 0:
        for i in range(1, SAMPLES + 1):
            at = WINDOW + inner * i // (SAMPLES + 1)
            spans.append((at, min(SAMPLE_BYTES, offset - WINDOW - at)))
    if offset > WINDOW:
        tail = max(WINDOW, offset - WINDOW)
        spans.append((tail, offset - tail))
    for at, length in spans:
        if length <= 0:
            continue
        data = os.pread(fd, length, at)
        if len(data) != length:
            return ""
        digest.update(data)
    return digest.hexdigest()


def _same_prefix(handle, st: os.stat_result, record: SessionRecord) -> bool:
    """Whether the transcript still starts with the ``record.offset`` bytes ingested."""
    if record.offset > st.st_size:
        return False
    if record.format == 1:  # an old session file: its full SHA-256, read once (the step converts it)
        digest, whole = _hash_prefix(handle, record.offset)
        return whole and digest.hexdigest() == record.sha256
    if (record.dev, record.ino) != (st.st_dev, st.st_ino):
        return False  # another file now (replaced, or copied back): read again from the start
    return bool(record.sha256) and fingerprint(handle.fileno(), record.offset) == record.sha256


def _lines(data: bytes) -> tuple[list[str], int]:
    """The complete lines of ``data`` (decoded; invalid UTF-8 replaced) and the bytes they span.

    Split on ``\n`` only: JSON writers leave U+2028, U+2029 and U+0085 raw inside strings, and
    ``str.splitlines`` would break a line there."""
    end = data.rfind(b"\n") + 1
    return data[:end].decode("utf-8", errors="replace").split("\n")[:-1], end


def _check_transcript(handle, path: Path) -> os.stat_result:
    """The open file's stat; refuses what is not a Claude Code transcript: not a regular file, or
    text that does not start a JSON object."""
    st = os.fstat(handle.fileno())
    if not stat.S_ISREG(st.st_mode):
        raise ValidationError("transcript", f"{path} is not a regular file")
    first = handle.read(4096).lstrip()
    handle.seek(0)
    if first and not first.startswith(b"{"):  # every line of a transcript is a JSON object
        raise ValidationError("transcript", f"{path} does not look like a Claude Code transcript (JSON lines)")
    return st


def ingest_transcript(
    root: Path, transcript: Path | str, session_id: str | None = None, index: bool = True,
    step_bytes: int | None = None, until_complete: bool = False,
) -> IngestResult:
    """Ingest one transcript into ``<root>/.autology/sessions/``: one step of at most ``step_bytes``
    (default :data:`STEP_BYTES`) new bytes, or (``until_complete``) steps until the end; with ``index``,
    the search index takes in what was read (a partial step's turns are searchable at once)."""
    root = Path(root)
    step_bytes = step_bytes or STEP_BYTES
    path = Path(transcript).expanduser()
    sid = session_id or session_id_for(path)
    if not _SAFE_ID.match(sid) or sid.startswith("."):
        sid = session_id_for(path)
    with session_lock(root).hold():
        result = _ingest_locked(root, path, sid, step_bytes, until_complete)
    if index and result.mode in ("appended", "full"):  # every step: the index takes in that step's turns
        from autology_mcp.sessions.index import SessionIndex

        SessionIndex.for_root(root).sync()
        result.indexed = True
    return result


def _read_step(handle, step_bytes: int) -> tuple[list[str], int, int, bool]:
    """From the handle's position: the complete lines of at most ``step_bytes`` bytes, the bytes
    consumed, how many over-long lines were skipped, and whether the step stopped at its limit
    (more complete lines may follow)."""
    data = handle.read(step_bytes)
    lines, used = _lines(data)
    if used == 0 and len(data) == step_bytes:  # one line longer than a whole step: skip it, block by block
        used = len(data)
        while True:
            block = handle.read(BLOCK)
            if not block:
                return [], 0, 0, False  # no end yet: an unfinished line, wait for it
            cut = block.find(b"\n")
            if cut >= 0:
                return [], used + cut + 1, 1, True
            used += len(block)
    return lines, used, 0, len(data) == step_bytes


def _ingest_locked(root: Path, path: Path, sid: str, step_bytes: int, until_complete: bool = False) -> IngestResult:
    """Under the session lock: one step of at most ``step_bytes`` new bytes, or (``until_complete``)
    steps to the end in this one pass, each appended to the session file as it is read (a run cut
    short keeps the steps it finished). Only the bytes after the recorded offset are read when the
    transcript still starts with what was ingested."""
    result = IngestResult(sid, str(path), "full")
    if sid in forgotten_ids(root):
        result.mode = "forgotten"  # `autology sessions forget`: never stored again
        return result
    header = load_header(root, sid)  # the file's first line and last checkpoint: no turn is read
    try:
        with _open(path) as handle:
            st = _check_transcript(handle, path)
            same_file = header is not None and header.transcript == str(path) and (
                header.size, header.mtime_ns) == (st.st_size, st.st_mtime_ns)
            if same_file and header.complete:
                return _unchanged(result, header)  # the usual case: decided from the checkpoint alone
            continuing = header is not None and _same_prefix(handle, st, header)
            whole = not continuing or header.format != FORMAT  # the step writes the file whole
            record = SessionRecord(session_id=sid)
            if continuing:
                assert header is not None
                record = header
                result.mode = "appended"
                if header.format != FORMAT:
                    record = load_session(root, sid) or header  # every turn, written again in format 2
            first = True
            while True:
                handle.seek(record.offset)
                lines, used, skipped, limited = _read_step(handle, step_bytes)
                if continuing and first and used == 0:
                    return _unchanged(result, record)  # nothing new, or only an unfinished line
                first = False
                new_turns, state = parse_lines(lines, record.state, cwd=str(root))
                if not continuing and not limited and not state.turns and header is not None \
                        and header.transcript != str(path) and header.state.turns:
                    return _unchanged(result, header)  # an empty file of the same session (a Gemini resume's stub)
                if header is None and not limited and not state.turns and record.offset == 0:
                    result.mode = "empty"  # no turn at all (an agent opened and closed): nothing stored, yet
                    result.malformed = state.malformed + skipped
                    return result
                state.malformed += skipped
                summary = record.running_summary()  # (of a format 1 file: from its turns, before the new ones)
                summary.update(new_turns, sid)
                record.state = state
                record.offset += used
                record.transcript = str(path)
                record.size, record.mtime_ns, record.dev, record.ino = st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino
                record.complete = not limited or record.offset >= st.st_size
                record.sha256 = fingerprint(handle.fileno(), record.offset)
                if record.complete:  # the handoff sums up the whole session: built once it is all read
                    record.handoff = handoff_of(state, summary)
                if whole:
                    record.turns = record.turns + new_turns
                    result.path = str(write_session(root, record))
                    record.turns = []
                    whole = False
                else:
                    result.path = str(append_step(root, record, new_turns))
                result.new_turns += len(new_turns)
                result.bytes_read += used
                if not (until_complete and limited and used):
                    break
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    result.complete = record.complete
    result.turns = record.state.turns
    result.malformed = record.state.malformed
    result.title = record.title
    return result


def _unchanged(result: IngestResult, record: SessionRecord) -> IngestResult:
    result.mode = "unchanged"
    result.turns = record.state.turns
    result.malformed = record.state.malformed
    result.title = record.title
    return result
