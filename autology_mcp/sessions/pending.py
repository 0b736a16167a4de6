"""Transcripts still being written when their session's end hook ran (issue 42).

Copilot CLI runs its ``agentStop`` hook before it has written the turn to ``events.jsonl``: in the
end-to-end runs the file of a one-prompt session did not exist yet at every agentStop, and a
session with tool calls lacked its last result and answer. An ingest at that moment loses them.

So the end hook asks :func:`written_through` whether the transcript already holds everything the
agent did before the hook. When it does not, the hook :func:`note`\\ s it here, one small JSON file
per transcript in ``.autology/sessions/pending/``, and a follower process
(:mod:`autology_mcp.sessions.follow`) ingests it once it is written through, or once
:data:`FOLLOW_FOR_S` have passed (then as it is). No fixed sleep decides it: the transcript's own
content does.

An agent's transcript is *written through* at its end event when it holds a line stamped at or after
that event (Copilot stamps every event, and logs the ``agentStop`` hook's own start with the same
time as the hook's payload). Agents not in :data:`LATE_WRITERS` write their transcript before their
end event (Claude Code, Codex and Gemini CLI, checked in the same end-to-end runs).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from autology_mcp.common.fsutil import WriteLock, atomic_write, remove_file
from autology_mcp.sessions.paths import sessions_dir

LATE_WRITERS = frozenset({"copilot"})
FOLLOW_FOR_S = 300  # after this long a noted transcript is ingested as it is (the agent may have died)
TAIL_BYTES = 64 * 1024
PENDING_DIR = "pending"


@dataclass
class Pending:
    transcript: str
    session_id: str | None
    agent: str
    ended_ms: int  # when the end event fired (the agent's clock when its payload says, else the hook's)
    noted_ms: int  # when it was noted here
    error: str = ""  # why the last ingest failed (the follower leaves it to `autology sessions ingest`)

    @property
    def expired(self) -> bool:
        return time.time() * 1000 - self.noted_ms > FOLLOW_FOR_S * 1000


def pending_dir(root: Path) -> Path:
    return sessions_dir(root) / PENDING_DIR


def _lock(root: Path) -> WriteLock:
    return WriteLock(pending_dir(root) / ".lock")


def _file(root: Path, transcript: str) -> Path:
    return pending_dir(root) / (hashlib.sha256(transcript.encode()).hexdigest()[:24] + ".json")


def ended_ms(payload: dict[str, Any]) -> int:
    """When the end event fired: the payload's ``timestamp`` (epoch milliseconds, Copilot's), else now."""
    stamp = payload.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and stamp > 0:
        return int(stamp)
    return int(time.time() * 1000)


def late_writer(agent: Any) -> bool:
    return agent in LATE_WRITERS


def written_through(agent: Any, transcript: Path, since_ms: int) -> bool:
    """Whether ``transcript`` holds all that ``agent`` did before ``since_ms``: always, for an agent
    that writes its transcript before its end event; for a late writer, when its last complete line is
    stamped at ``since_ms`` or later (events are written in order)."""
    if not late_writer(agent):
        return True
    stamp = _last_stamp(transcript)
    return stamp is not None and stamp >= since_ms


def _last_stamp(transcript: Path) -> int | None:
    """The ``timestamp`` of the last complete JSON line that has one, in epoch milliseconds."""
    try:
        with open(transcript, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    for raw in reversed(tail.split(b"\n")[:-1]):  # the piece after the last newline is not complete
        try:
            entry = json.loads(raw)
        except ValueError:
            continue  # the first piece of the tail may be a line's end
        stamp = entry.get("timestamp") if isinstance(entry, dict) else None
        if isinstance(stamp, str):
            try:
                return int(datetime.fromisoformat(stamp).timestamp() * 1000)
            except ValueError:
                continue
    return None


def note(root: Path, transcript: Path, session_id: str | None, agent: str, since_ms: int) -> Pending:
    """Note a transcript to ingest once it is written through ``since_ms`` (a later note replaces it)."""
    entry = Pending(str(transcript), session_id, agent, since_ms, int(time.time() * 1000))
    with _lock(root).hold():
        atomic_write(_file(root, entry.transcript), json.dumps(asdict(entry)), durable=False)
    return entry


def entries(root: Path) -> list[Pending]:
    """The noted transcripts, oldest note first (an unreadable note is dropped)."""
    folder = pending_dir(root)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    found = []
    for name in names:
        entry = _read(folder / name)
        if entry is None:
            remove_file(folder / name)
        else:
            found.append(entry)
    return sorted(found, key=lambda e: e.noted_ms)


def _read(path: Path) -> Pending | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Pending(**data) if isinstance(data, dict) else None
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        return None


def done(root: Path, entry: Pending, error: str = "") -> None:
    """The entry was ingested (or failed: ``error``). Kept when a newer note replaced it meanwhile."""
    path = _file(root, entry.transcript)
    with _lock(root).hold():
        current = _read(path)
        if current != entry:
            return
        if error:
            atomic_write(path, json.dumps(asdict(Pending(**{**asdict(entry), "error": error}))), durable=False)
        else:
            remove_file(path)
