"""Transcripts are ingested in bounded steps (issue 13, item 5): a SessionEnd hook reads at most one
step of new bytes, so it finishes within its timeout however big the transcript; the next step goes
on where it stopped and the result equals one ingest of the whole. Files that are not transcripts
are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessions_helpers import BASIC, COMPACTED, assistant_line, copy_fixture, user_line

from autology_mcp.cli.main import main
from autology_mcp.common.errors import ValidationError
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.store import load_session


@pytest.mark.parametrize("fixture", [BASIC, COMPACTED])
def test_steps_of_a_few_kilobytes_end_where_one_ingest_does(project: Path, tmp_path: Path, fixture: Path) -> None:
    whole = copy_fixture(fixture, tmp_path / "a", "s.jsonl")
    stepped = copy_fixture(fixture, tmp_path / "b", "s.jsonl")
    other = tmp_path / "other-project"
    (other / ".autology").mkdir(parents=True)
    ingest_transcript(other, whole, index=False)
    steps = []
    while True:
        result = ingest_transcript(project, stepped, index=False, step_bytes=2048)
        steps.append(result)
        assert result.bytes_read <= 2048
        if result.complete:
            break
        assert load_session(project, "s").complete is False  # the header says there is more
    assert len(steps) > 2 and steps[0].mode == "full" and all(s.mode == "appended" for s in steps[1:])
    a, b = load_session(other, "s"), load_session(project, "s")
    assert b.turns == a.turns and b.handoff == a.handoff and (b.offset, b.sha256) == (a.offset, a.sha256)
    assert ingest_transcript(project, stepped, index=False, step_bytes=2048).mode == "unchanged"


def test_a_line_longer_than_a_step_is_skipped_unread(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "t" / "long.jsonl"
    path.parent.mkdir()
    lines = [
        user_line("long", "Before the huge line: keep this.", "2026-10-03T10:00:00Z", "u-1"),
        assistant_line("long", "x" * 50_000, "2026-10-03T10:00:01Z", "a-1"),
        user_line("long", "After the huge line: keep this too.", "2026-10-03T10:00:02Z", "u-2"),
    ]
    path.write_text("\n".join(lines) + "\n")
    result = ingest_transcript(project, path, index=False, step_bytes=4096, until_complete=True)
    record = load_session(project, "long")
    assert result.complete and record.offset == path.stat().st_size
    assert [t.text for t in record.turns] == ["Before the huge line: keep this.", "After the huge line: keep this too."]
    assert record.state.malformed == 1


def test_files_that_are_not_transcripts_are_refused(project: Path, tmp_path: Path, capsys) -> None:
    fake = tmp_path / "shadow.jsonl"
    fake.write_text("root:$6$salt$hash:19000:0:99999:7:::\n")
    for path in (fake, Path("/proc/self/environ")):
        with pytest.raises(ValidationError, match="does not look like a Claude Code transcript|not a regular file"):
            ingest_transcript(project, path, index=False)
    assert main(["--root", str(project), "sessions", "ingest", str(fake), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["failed"][0]["transcript"] == str(fake) and not out["ingested"]
    assert not list((project / ".autology" / "sessions").glob("*.jsonl"))


def test_session_end_reads_one_step_and_leaves_the_node_and_index_to_the_last(project: Path, tmp_path: Path, monkeypatch) -> None:
    from autology_mcp.hooks.handlers import session_end
    from autology_mcp.sessions import ingest

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setattr(ingest, "STEP_BYTES", 2048)
    transcript = copy_fixture(BASIC, tmp_path / "projects" / "-project", "stepped.jsonl")
    payload = {"session_id": "stepped", "transcript_path": str(transcript), "cwd": str(project), "hook_event_name": "SessionEnd"}
    messages = []
    for _ in range(50):
        messages.append(session_end(payload, project)["systemMessage"])
        if "the rest follows" not in messages[-1]:
            break
    assert len(messages) > 2 and "the rest follows at the next SessionEnd" in messages[0]
    assert "indexed" in messages[-1] and load_session(project, "stepped").complete
    whole = tmp_path / "whole"
    (whole / ".autology").mkdir(parents=True)
    ingest_transcript(whole, transcript, index=False, until_complete=True)
    assert load_session(project, "stepped").handoff == load_session(whole, "stepped").handoff
