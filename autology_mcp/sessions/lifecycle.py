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
    Claude Code's field names, ``transcript_path`` and ``session_id``.)"""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path.strip():
        return None
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    transcript = Path(path).expanduser()
    wait = WAIT_FOR_TRANSCRIPT_S if payload.get("agent") == "copilot" else 0.0
    if transcript.suffix != ".jsonl" or not _appears(transcript, wait):
        return None
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.discover import agent_transcript_dirs

    allowed = agent_transcript_dirs()
    configured = load_sessions_config(root).transcripts_dir
    if configured:
        allowed.append(Path(configured).expanduser())
    resolved = transcript.resolve()
    if not any(resolved.is_relative_to(folder.resolve()) for folder in allowed):
        log.warning("not ingesting %s: it is not under a folder where an agent keeps its transcripts (%s)",
                    transcript, ", ".join(map(str, allowed)))
        return None
    return transcript, session_id


WAIT_FOR_TRANSCRIPT_S = 1.5


def _appears(transcript: Path, wait: float) -> bool:
    """The transcript is a file, or becomes one within ``wait`` seconds: Copilot CLI 1.0.102 runs its
    agentStop hook before it writes the session's events.jsonl in about half of the runs (it appears
    within 0.1 s)."""
    import time

    deadline = time.monotonic() + wait
    while not transcript.is_file():
        if time.monotonic() >= deadline or transcript.exists():
            return False
        time.sleep(0.05)
    return True


def ingest_from_payload(root: Path, payload: dict[str, Any]) -> IngestResult | None:
    """Ingest the payload's transcript; None when disabled, without a store, or without a transcript."""
    if not _active(root):
        return None
    found = _transcript(root, payload)
    if found is None:
        return None
    from autology_mcp.sessions.ingest import ingest_transcript

    result = ingest_transcript(root, found[0], session_id=found[1])
    return None if result.mode == "forgotten" else result


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
