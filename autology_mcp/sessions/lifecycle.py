"""What the SessionEnd and SessionStart hooks do with session memory (the hook handlers call these).

SessionEnd: ingest the transcript (``transcript_path`` of the payload), then write or update the
session's ``session`` node, then (when ``capture_insights`` is on) capture its new insights as
``needs_review`` nodes. SessionStart: the recall of the latest other session. Nothing happens when
session memory is disabled or the project has no ``.autology/`` (a hook never creates one).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.paths import ProjectPaths

log = logging.getLogger("autology.sessions")

if TYPE_CHECKING:
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.sessions.ingest import IngestResult


def _active(root: Path) -> bool:
    from autology_mcp.sessions.config import load_sessions_config

    return ProjectPaths(root).nodes.is_dir() and load_sessions_config(root).enabled


def _transcript(root: Path, payload: dict[str, Any]) -> tuple[Path, str | None] | None:
    """The payload's transcript, if it is one an agent wrote: a ``.jsonl`` file under Claude Code's
    projects folder, Codex's sessions folder (``$CODEX_HOME/sessions``), Gemini CLI's
    (``~/.gemini/tmp``), Copilot CLI's (``$COPILOT_HOME/session-state``), or the configured
    ``transcripts_dir``. A hook payload names any path it likes; this one never reads
    ``/etc/shadow`` or ``/proc/self/environ``. (The hooks layer hands every agent's payload over with
    Claude Code's field names, ``transcript_path`` and ``session_id``.) The file of an agent that writes
    it after its end event (:data:`~autology_mcp.sessions.pending.LATE_WRITERS`) may not exist yet."""
    from autology_mcp.sessions.pending import late_writer

    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path.strip():
        return None
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    transcript = Path(path).expanduser()
    if transcript.suffix != ".jsonl" or not allowed_transcript(root, transcript):
        return None
    if not transcript.is_file() and (transcript.exists() or not late_writer(payload.get("agent"))):
        return None
    return transcript, session_id


def allowed_transcript(root: Path, transcript: Path) -> bool:
    """Whether ``transcript`` is under a folder where an agent keeps its transcripts, or the configured one."""
    from autology_mcp.common.errors import AutologyError
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.discover import agent_transcript_dirs

    allowed = agent_transcript_dirs()
    try:
        configured = load_sessions_config(root).transcripts_dir
    except AutologyError:  # a broken config names no folder of its own; the agents' folders still count
        configured = None
    if configured:
        allowed.append(Path(configured).expanduser())
    resolved = transcript.resolve()
    if any(resolved.is_relative_to(folder.resolve()) for folder in allowed):
        return True
    log.warning("not ingesting %s: it is not under a folder where an agent keeps its transcripts (%s)",
                transcript, ", ".join(map(str, allowed)))
    return False


def ingest_from_payload(root: Path, payload: dict[str, Any]) -> IngestResult | None:
    """Ingest the payload's transcript now; None when disabled, without a store, or without a transcript."""
    if not _active(root):
        return None
    found = _transcript(root, payload)
    if found is None or not found[0].is_file():
        return None
    from autology_mcp.sessions.ingest import ingest_transcript

    result = ingest_transcript(root, found[0], session_id=found[1])
    return None if result.mode in ("forgotten", "empty") else result  # forgotten, or not a turn yet


def session_ended(root: Path, payload: dict[str, Any]) -> str | None:
    """What the end hook does for session memory; returns what was done, or None (disabled, no store,
    no transcript).

    The transcript is ingested and the session finished (:func:`finish_session`) now when it holds
    everything the agent did before this hook; otherwise it is noted and a follower process ingests
    it once it does (:mod:`~autology_mcp.sessions.pending`, :mod:`~autology_mcp.sessions.follow`)."""
    if not _active(root):
        return None
    found = _transcript(root, payload)
    if found is None:
        return None
    from autology_mcp.sessions import pending

    agent = payload.get("agent")
    since = pending.ended_ms(payload)
    if not pending.written_through(agent, found[0], since):
        pending.note(root, found[0], found[1], str(agent), since)
        start_follower(root)
        return ("autology session memory: the transcript is still being written; it is ingested as soon as it"
                " is complete (`autology sessions status` shows it meanwhile).")
    result = ingest_from_payload(root, payload)
    if result is None or result.mode == "unchanged":  # nothing new since it was read (an earlier end, a follower)
        return None
    return finish_session(root, result)


def start_follower(root: Path) -> None:
    """Start the process that ingests noted transcripts once they are written through
    (:mod:`~autology_mcp.sessions.follow`; it exits at once when another one follows this project).
    Detached: its own session, no standard streams, so the hook and the agent never wait for it."""
    import subprocess
    import sys

    subprocess.Popen(
        [sys.executable, "-m", "autology_mcp.sessions.follow", str(root)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )


def resume_pending(root: Path) -> None:
    """At a session's start: a follower for the notes an earlier one left (none is started when there are none)."""
    from autology_mcp.sessions.pending import entries

    if any(not e.error for e in entries(root)):
        start_follower(root)


def ingest_pending(root: Path, force: bool = False) -> list[str]:
    """One pass over the noted transcripts: each one written through (or noted :data:`FOLLOW_FOR_S` ago,
    or any, with ``force``) is ingested to its end and its session finished. Returns what was done."""
    from autology_mcp.common.errors import AutologyError
    from autology_mcp.sessions import pending
    from autology_mcp.sessions.ingest import ingest_transcript

    done = []
    for entry in pending.entries(root):
        transcript = Path(entry.transcript)
        ready = force or entry.expired or pending.written_through(entry.agent, transcript, entry.ended_ms)
        if not ready or (entry.error and not force):
            continue
        if not _active(root) or not transcript.is_file() or not allowed_transcript(root, transcript):
            pending.done(root, entry)  # nothing to ingest: off, gone, or never written
            continue
        try:
            result = ingest_transcript(root, transcript, session_id=entry.session_id, until_complete=True)
            if result.mode not in ("forgotten", "empty"):
                done.append(finish_session(root, result))
        except (AutologyError, OSError) as exc:
            pending.done(root, entry, error=str(exc))
            continue
        pending.done(root, entry)
    return done


def finish_session(root: Path, result: IngestResult) -> str:
    """After the ingest at SessionEnd: the session node, and the insights when configured. Returns a summary.

    After a partial step (the transcript is bigger than one step) only that is said: the node and the
    insights follow at the step that completes it (the search index took in the step's turns already).
    Both are built from the session file's last checkpoint, not from its turns, so each SessionEnd
    stays within its timeout however long the session."""
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.session_node import write_session_node

    if not result.complete:
        return (
            f"autology session memory: {result.new_turns} new turn(s) of “{result.title}” read; the transcript is"
            " large, the rest follows at the next SessionEnd (or run `autology sessions ingest --all`)."
        )

    config = load_sessions_config(root)
    autology = Autology.open(root)
    try:
        node = write_session_node(autology, result.session_id) if config.session_nodes else None
        words = [f"session memory: {result.new_turns} new turn(s) of “{result.title}” indexed"]
        if node is not None:
            words.append(f"session node {node.node_id} {node.action}")
        if config.capture_insights:
            from autology_mcp.sessions.capture import capture, collect

            insights = collect(root, autology.store.index, session_id=result.session_id)
            report = capture(autology, insights, node.node_id if node else None)
            if report.captured:
                words.append(f"{len(report.captured)} insight(s) captured for review")
    finally:
        autology.close()
    return "autology " + "; ".join(words) + "."


def recall_block(root: Path, store: NodeStore | None, payload: dict[str, Any], limit: int) -> str:
    """The SessionStart recall of the latest other session ("" when there is none or it is disabled)."""
    if not _active(root):
        return ""
    from autology_mcp.sessions.recall import latest_recall

    current = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    recall = latest_recall(root, store, exclude_session=current)
    return recall.text(limit) if recall else ""


WORTH_READ_MAX = 4 * 1024 * 1024  # of a transcript not in session memory, read to judge the nudge
WORTH_KINDS = ("decision", "convention", "discovery")  # a sentence of these kinds is worth a node ("always" alone is not)


def worth_recording(root: Path, payload: dict[str, Any]) -> bool:
    """Whether the ending session did something worth recording (issue 39): it edited files, or said
    something decision-like ("we decided …", "from now on …", "the root cause was …"). From the stored
    session when session memory has it (its whole state, and the insights mined at ingest), else from
    the transcript's first :data:`WORTH_READ_MAX` bytes; False when there is no transcript to read."""
    from autology_mcp.sessions.insights import THRESHOLD, mine_turns
    from autology_mcp.sessions.ingest import session_id_for
    from autology_mcp.sessions.store import load_header
    from autology_mcp.sessions.transcript import parse_lines

    found = _transcript(root, payload)
    if found is None or not found[0].is_file():
        return False
    transcript, sid = found
    sid = sid or session_id_for(transcript)
    try:
        header = load_header(root, sid) if _active(root) else None
    except Exception:  # an unreadable session file: judge from the transcript
        header = None
    if header is not None and header.transcript == str(transcript):
        if header.state.files_modified:
            return True
        from autology_mcp.sessions.index import SessionIndex

        with SessionIndex.for_root(root).reading() as conn:
            kinds = {k for (k,) in conn.execute("SELECT kind FROM insights WHERE session_id = ? AND score >= ?",
                                                (sid, THRESHOLD))}
        return bool(kinds & set(WORTH_KINDS))
    with transcript.open("rb") as handle:
        data = handle.read(WORTH_READ_MAX)
    lines = data[: data.rfind(b"\n") + 1].decode("utf-8", "replace").splitlines()
    turns, state = parse_lines(lines, cwd=str(root))
    return bool(state.files_modified) or any(i.kind in WORTH_KINDS for i in mine_turns(turns, threshold=THRESHOLD))
