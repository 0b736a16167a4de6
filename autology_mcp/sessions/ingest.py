"""Ingest a Claude Code transcript into the project's session memory, incrementally and idempotently.

- Unchanged transcript (same size and modification time, or same bytes): nothing is written.
- Grown transcript whose first ``offset`` bytes still hash to the recorded SHA-256: only the new
  complete lines are parsed (a partly written last line waits for the next ingest), and the parser
  continues from its saved state, so turn numbers and chunk ids of the old part do not change.
- Anything else (rewritten, truncated, never seen): the whole transcript is parsed again.
- One ingest step reads at most :data:`STEP_BYTES` (8 MiB: at worst, all of it text to redact,
  about 2.5 s on a 2-core machine), so the SessionEnd hook always finishes within its timeout; the header then says
  ``"complete": false`` and the next step goes on from the offset (the prefix is hashed again,
  about 0.7 s per GB). ``autology sessions ingest`` runs the steps to the end in one pass (one
  hash, one write of the session file), holding one step's bytes at a time. A line
  longer than a step is skipped as malformed, never held in memory.
- Only files that look like Claude Code transcripts are read: a regular file whose text starts a
  JSON object (``/etc/shadow`` or ``/proc/self/environ`` named as a transcript is refused).

Every string is redacted before it reaches the session file or the index.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.sessions.handoff import build_handoff
from autology_mcp.sessions.store import (
    SessionRecord,
    forgotten_ids,
    load_header,
    load_session,
    session_lock,
    write_session,
)
from autology_mcp.sessions.transcript import ParseState, parse_lines

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


STEP_BYTES = 8 * 1024 * 1024


@dataclass
class IngestResult:
    session_id: str
    transcript: str
    mode: str  # "unchanged" | "appended" | "full" | "forgotten" (skipped: `autology sessions forget`)
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


def session_id_for(transcript: Path) -> str:
    """Claude Code names a transcript ``<session id>.jsonl``; an unusual name gets a stable hashed id."""
    stem = transcript.stem
    if _SAFE_ID.match(stem) and not stem.startswith("."):
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
    """SHA-256 of the first ``length`` bytes, read in blocks; False when the file is shorter."""
    digest = hashlib.sha256()
    remaining = length
    while remaining > 0:
        block = handle.read(min(BLOCK, remaining))
        if not block:
            return digest, False
        digest.update(block)
        remaining -= len(block)
    return digest, True


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
    the search index once the transcript is complete."""
    root = Path(root)
    step_bytes = step_bytes or STEP_BYTES
    path = Path(transcript).expanduser()
    sid = session_id or session_id_for(path)
    if not _SAFE_ID.match(sid) or sid.startswith("."):
        sid = session_id_for(path)
    with session_lock(root).hold():
        result = _ingest_locked(root, path, sid, step_bytes, until_complete)
    if index and result.complete and result.mode in ("appended", "full"):  # a partial step leaves it to the last
        from autology_mcp.sessions.index import SessionIndex

        SessionIndex.for_root(root).sync()
        result.indexed = True
    return result


def _read_step(handle, digest: hashlib._Hash, step_bytes: int) -> tuple[hashlib._Hash, list[str], int, int, bool]:
    """From the handle's position: the digest carried over the bytes consumed, the complete lines
    of at most ``step_bytes`` bytes, the bytes consumed, how many over-long lines were skipped,
    and whether the step stopped at its limit (more complete lines may follow)."""
    data = handle.read(step_bytes)
    lines, used = _lines(data)
    if used == 0 and len(data) == step_bytes:  # one line longer than a whole step: skip it, block by block
        scan = digest.copy()
        scan.update(data)
        used = len(data)
        while True:
            block = handle.read(BLOCK)
            if not block:
                return digest, [], 0, 0, False  # no end yet: an unfinished line, wait for it
            cut = block.find(b"\n")
            if cut >= 0:
                scan.update(block[: cut + 1])
                return scan, [], used + cut + 1, 1, True
            scan.update(block)
            used += len(block)
    digest.update(data[:used])
    return digest, lines, used, 0, len(data) == step_bytes


def _ingest_locked(root: Path, path: Path, sid: str, step_bytes: int, until_complete: bool = False) -> IngestResult:
    """Under the session lock: only the bytes after the recorded offset are read when the part
    before it is unchanged (its hash is checked block by block, never held in memory at once).
    One step of at most ``step_bytes``, or (``until_complete``) steps to the end in this one pass:
    the handle and the running hash carry over, and the session file is written once."""
    result = IngestResult(sid, str(path), "full")
    if sid in forgotten_ids(root):
        result.mode = "forgotten"  # `autology sessions forget`: never stored again
        return result
    header = load_header(root, sid)
    try:
        with _open(path) as handle:
            st = _check_transcript(handle, path)
            same_file = header is not None and header.transcript == str(path) and (
                header.size, header.mtime_ns) == (st.st_size, st.st_mtime_ns)
            if same_file and header.complete:
                return _unchanged(result, header)  # the usual case: decided from the header line alone
            record = load_session(root, sid) if header is not None else None
            continuing = False
            if record is not None and record.offset <= st.st_size:
                digest, complete = _hash_prefix(handle, record.offset)  # ~0.7 s per GB
                continuing = complete and digest.hexdigest() == record.sha256
            if continuing:
                assert record is not None
                state, turns, start, handoff = record.state, record.turns, record.offset, record.handoff
            else:
                handle.seek(0)
                digest = hashlib.sha256()
                state, turns, start, handoff = ParseState(), [], 0, ""
            new_turns: list = []
            used = 0
            while True:
                digest, lines, step_used, skipped, limited = _read_step(handle, digest, step_bytes)
                step_turns, state = parse_lines(lines, state, cwd=str(root))
                state.malformed += skipped
                new_turns += step_turns
                used += step_used
                if not (until_complete and limited and step_used):
                    break
                handle.seek(start + used)  # the step read past its last complete line
    except OSError as exc:
        raise StorageError(str(path), exc.strerror or str(exc)) from exc
    if continuing:
        if used == 0:
            return _unchanged(result, record)  # nothing new, or only an unfinished line
        result.mode = "appended"
    offset = start + used
    result.complete = not limited or offset >= st.st_size
    record = SessionRecord(
        session_id=sid,
        transcript=str(path),
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        offset=offset,
        sha256=digest.hexdigest(),
        complete=result.complete,
        state=state,
        turns=turns + new_turns,
    )
    # the handoff sums up the whole session: built once it is all read (a partial step keeps the last one)
    record.handoff = build_handoff(state, record.turns, sid) if result.complete else handoff
    result.path = str(write_session(root, record))
    result.new_turns = len(new_turns)
    result.turns = len(record.turns)
    result.malformed = state.malformed
    result.bytes_read = used
    result.title = record.title
    return result


def _unchanged(result: IngestResult, record: SessionRecord) -> IngestResult:
    result.mode = "unchanged"
    result.turns = record.state.turns
    result.malformed = record.state.malformed
    result.title = record.title
    return result
