"""Transcripts written after their session's end hook (issue 42): Copilot CLI runs agentStop before it
writes events.jsonl, or before it writes the turn's last events. The end hook notes the transcript and
a follower process ingests it once it is written through; nothing is lost, and no fixed sleep decides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from autology_mcp.sessions import pending
from autology_mcp.sessions.follow import follow
from autology_mcp.sessions.lifecycle import ingest_pending, session_ended
from autology_mcp.sessions.search import search_sessions
from autology_mcp.sessions.store import load_session
from test_transcript_agents import (  # noqa: F401  (agent_homes: the fixture)
    COPILOT_ID,
    COPILOT_TURNS,
    agent_homes,
    copilot_event,
    copilot_rows,
    dumps,
    stamp,
)

WHOLE = COPILOT_TURNS  # every turn, the last answer included


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


def session_rows(cwd: str) -> list[dict]:
    """A Copilot session as written: the turn ends at second 14, its agentStop hook is logged at 15 (the
    time in the hook's payload), the shutdown at 16."""
    stop = copilot_event(15, "hook.start", {"hookType": "agentStop", "input": {"sessionId": COPILOT_ID}})
    return [*copilot_rows(cwd)[:-1], stop, copilot_event(16, "session.shutdown", {"accountingSnapshot": {}})]


def events_path(agent_homes: Path) -> Path:
    folder = agent_homes / "copilot" / "session-state" / COPILOT_ID
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "events.jsonl"


def agent_stop(transcript: Path, project: Path) -> dict:
    return {"sessionId": COPILOT_ID, "transcriptPath": str(transcript), "cwd": str(project),
            "stopReason": "end_turn", "timestamp": ms(stamp(15))}


def turns(project: Path) -> list[tuple[str, str]]:
    record = load_session(project, COPILOT_ID)
    return [(t.role, t.text) for t in record.turns] if record else []


def wait_until_ingested(project: Path, bound: float = 60.0) -> None:
    deadline = time.monotonic() + bound
    while pending.entries(project):
        assert time.monotonic() < deadline, pending.entries(project)
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("at_stop", [0, 9], ids=["written-after", "grown-after"])
def test_a_transcript_written_5_s_after_agent_stop_is_ingested_whole(
    project: Path, agent_homes: Path, at_stop: int
) -> None:
    """Through the real hook command: at agentStop the transcript is missing (or holds its first 9
    events); 5 s later Copilot writes it whole. The hook returned at once; the follower it started
    ingests every turn, the last answer included, and the session is searchable."""
    transcript = events_path(agent_homes)
    rows = session_rows(str(project))
    if at_stop:
        transcript.write_text(dumps(rows[:at_stop]))
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR")}
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "autology_mcp.hooks", "--agent", "copilot", "session-end"],
                         input=json.dumps(agent_stop(transcript, project)), cwd=project, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 5, "the hook waited for the transcript"
    assert [e.session_id for e in pending.entries(project)] == [COPILOT_ID]
    assert turns(project) == []  # nothing ingested from a transcript the agent is still writing

    time.sleep(5)
    transcript.write_text(dumps(rows))
    wait_until_ingested(project)
    assert turns(project) == WHOLE
    assert any(h.session_id == COPILOT_ID for h in search_sessions(project, "load_settings tests fail"))


def test_written_through_reads_the_last_complete_stamp(tmp_path: Path) -> None:
    transcript = tmp_path / "events.jsonl"
    since = ms(stamp(15))
    assert not pending.written_through("copilot", transcript, since)  # not written yet
    rows = session_rows(str(tmp_path))
    transcript.write_text(dumps(rows[:-2]))
    assert not pending.written_through("copilot", transcript, since)  # stamped 14 at the latest
    transcript.write_text(dumps(rows[:-1]) + '{"type": "session.shutdown", "timestamp": "2026-11-27T12:5')
    assert pending.written_through("copilot", transcript, since)  # the hook's own event; a half line skipped
    transcript.write_text(dumps(rows[:-2]) + json.dumps({"type": "x", "timestamp": stamp(59)})[:-5] + "\n")
    assert not pending.written_through("copilot", transcript, since)  # a broken last line is not a stamp
    for agent in ("claude-code", "codex", "gemini"):  # they write it before their end event
        assert pending.written_through(agent, tmp_path / "missing.jsonl", since)


def test_the_end_hook_ingests_at_once_what_is_written_through(project: Path, agent_homes: Path) -> None:
    transcript = events_path(agent_homes)
    transcript.write_text(dumps(session_rows(str(project))))
    payload = {"agent": "copilot", "transcript_path": str(transcript), "session_id": COPILOT_ID,
               "timestamp": ms(stamp(15))}
    said = session_ended(project, payload)
    assert said and "7 new turn(s)" in said
    assert turns(project) == WHOLE and pending.entries(project) == []


def test_a_missing_transcript_is_noted_only_for_an_agent_that_writes_late(project: Path, agent_homes: Path,
                                                                          monkeypatch) -> None:
    started: list[Path] = []
    monkeypatch.setattr("autology_mcp.sessions.lifecycle.start_follower", started.append)
    transcript = events_path(agent_homes)
    payload = {"transcript_path": str(transcript), "session_id": COPILOT_ID, "timestamp": ms(stamp(15))}
    assert session_ended(project, payload) is None  # Claude Code's shape: it writes before SessionEnd
    assert pending.entries(project) == [] and started == []
    said = session_ended(project, {**payload, "agent": "copilot"})
    assert said and "still being written" in said
    assert started == [project] and [e.transcript for e in pending.entries(project)] == [str(transcript)]
    outside = agent_homes / "elsewhere" / COPILOT_ID / "events.jsonl"
    assert session_ended(project, {**payload, "agent": "copilot", "transcript_path": str(outside)}) is None
    assert len(pending.entries(project)) == 1  # a path outside the agents' folders is never noted


def test_the_follower_waits_for_the_stamp_then_ingests_and_exits(project: Path, agent_homes: Path) -> None:
    """In process: follow() returns once the note is gone, after the transcript is written through."""
    transcript = events_path(agent_homes)
    rows = session_rows(str(project))
    transcript.write_text(dumps(rows[:9]))
    pending.note(project, transcript, COPILOT_ID, "copilot", ms(stamp(15)))
    assert ingest_pending(project) == [] and turns(project) == []  # not written through: left as it is

    import threading

    def finish_writing() -> None:
        time.sleep(0.5)
        transcript.write_text(dumps(rows))

    writer = threading.Thread(target=finish_writing)
    writer.start()
    follow(project)
    writer.join()
    assert turns(project) == WHOLE and pending.entries(project) == []


def test_a_note_past_its_bound_is_ingested_as_it_is(project: Path, agent_homes: Path, monkeypatch) -> None:
    """An agent that died before writing the rest: after FOLLOW_FOR_S what is there is kept."""
    transcript = events_path(agent_homes)
    transcript.write_text(dumps(session_rows(str(project))[:9]))
    pending.note(project, transcript, COPILOT_ID, "copilot", ms(stamp(15)))
    monkeypatch.setattr(pending, "FOLLOW_FOR_S", -1)
    assert len(ingest_pending(project)) == 1
    assert turns(project) == WHOLE[:3] and pending.entries(project) == []


def test_a_later_note_of_the_same_transcript_is_not_dropped_by_an_earlier_ingest(project: Path,
                                                                                 agent_homes: Path) -> None:
    transcript = events_path(agent_homes)
    first = pending.note(project, transcript, COPILOT_ID, "copilot", 1)
    second = pending.note(project, transcript, COPILOT_ID, "copilot", 2)
    assert pending.entries(project) == [second]
    pending.done(project, first)  # the follower finishing the first note's ingest
    assert pending.entries(project) == [second]
    pending.done(project, second, error="disk full")
    assert [e.error for e in pending.entries(project)] == ["disk full"]


def test_status_names_a_noted_transcript_and_ingest_all_takes_it(project: Path, agent_homes: Path, capsys) -> None:
    from autology_mcp.cli.main import main

    transcript = events_path(agent_homes)
    transcript.write_text(dumps(session_rows(str(project))[:9]))
    pending.note(project, transcript, COPILOT_ID, "copilot", ms(stamp(15)))
    assert main(["--root", str(project), "sessions", "status"]) == 0
    out = capsys.readouterr().out
    assert f"copilot session {COPILOT_ID}: its transcript was still being written" in out, out
    assert "ingested once complete" in out
    assert main(["--root", str(project), "sessions", "ingest", "--all", "--agent", "copilot"]) == 0
    capsys.readouterr()
    assert pending.entries(project) == [] and turns(project) == WHOLE[:3]
    assert main(["--root", str(project), "sessions", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pending"] == []
