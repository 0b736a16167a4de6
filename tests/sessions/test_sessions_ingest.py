"""Ingest: session files under .autology/sessions/, incremental by hash and offset, idempotent, private."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessions_helpers import (
    BASIC,
    COMPACTED,
    MALFORMED,
    PLANTED_SECRETS,
    SECRETS,
    assistant_line,
    copy_fixture,
    user_line,
)

from autology_mcp.common.errors import ValidationError
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.search import search_sessions
from autology_mcp.sessions.store import load_session, session_files


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".autology" / "sessions").iterdir())}


def test_first_ingest_writes_one_session_file(project: Path, tmp_path: Path) -> None:
    transcript = copy_fixture(BASIC, tmp_path / "t")
    result = ingest_transcript(project, transcript)
    assert (result.mode, result.new_turns, result.turns, result.malformed) == ("full", 10, 10, 0)
    assert result.title == "Retry backoff for the HTTP client"
    assert [p.name for p in session_files(project)] == ["basic.jsonl"]
    record = load_session(project, "basic")
    assert record is not None and record.offset == transcript.stat().st_size
    assert record.handoff.startswith("Asked: The HTTP client hammers the payments API")
    assert "Files touched: src/http/client.py, src/http/backoff.py" in record.handoff  # relative to the session cwd
    assert "We decided to use exponential backoff with full jitter" in record.handoff


def test_reingest_changes_nothing(project: Path, tmp_path: Path) -> None:
    transcript = copy_fixture(COMPACTED, tmp_path / "t")
    ingest_transcript(project, transcript)
    before = snapshot(project)
    db = project / ".autology" / "cache" / "sessions.sqlite"
    db_before = db.read_bytes()
    again = ingest_transcript(project, transcript)
    assert again.mode == "unchanged" and again.new_turns == 0
    assert snapshot(project) == before
    assert db.read_bytes() == db_before
    transcript.touch()  # a new modification time, same bytes: still nothing to do
    assert ingest_transcript(project, transcript).mode == "unchanged"
    assert snapshot(project) == before


def test_appended_transcript_ingests_only_the_new_part(project: Path, tmp_path: Path) -> None:
    transcript = copy_fixture(BASIC, tmp_path / "t")
    first = ingest_transcript(project, transcript)
    record = load_session(project, "basic")
    assert record is not None
    old_turns = list(record.turns)
    size = transcript.stat().st_size
    with transcript.open("a") as handle:
        handle.write(user_line("basic", "Now add a circuit breaker around the payments client", "2026-10-02T10:00:00Z", "u-1") + "\n")
        handle.write(assistant_line("basic", "Added a circuit breaker that opens after 10 failures.", "2026-10-02T10:00:09Z", "u-2") + "\n")
    result = ingest_transcript(project, transcript)
    assert result.mode == "appended"
    assert result.new_turns == 2 and result.turns == first.turns + 2
    assert result.bytes_read == transcript.stat().st_size - size  # only the appended bytes were parsed
    record = load_session(project, "basic")
    assert record is not None and record.turns[: len(old_turns)] == old_turns
    assert [t.n for t in record.turns[-2:]] == [first.turns, first.turns + 1]
    assert any(h.session_id == "basic" for h in search_sessions(project, "circuit breaker"))


def test_unfinished_last_line_waits_for_the_next_ingest(project: Path, tmp_path: Path) -> None:
    transcript = copy_fixture(MALFORMED, tmp_path / "t")
    first = ingest_transcript(project, transcript)
    assert first.malformed == 6 and first.turns == 3
    record = load_session(project, "malformed")
    assert record is not None and record.offset < transcript.stat().st_size
    with transcript.open("a") as handle:  # Claude Code finishes writing the line
        handle.write('ex."}]},"uuid":"x","timestamp":"2026-10-07T10:01:05.000Z","sessionId":"s","cwd":"/home/dev/shop"}\n')
    second = ingest_transcript(project, transcript)
    assert second.mode == "appended" and second.new_turns == 1
    record = load_session(project, "malformed")
    assert record is not None and record.turns[-1].text.startswith("Writing the migration for the products.category_id index.")


def test_rewritten_transcript_is_ingested_again(project: Path, tmp_path: Path) -> None:
    transcript = copy_fixture(BASIC, tmp_path / "t")
    ingest_transcript(project, transcript)
    transcript.write_text(transcript.read_text().replace("payments API", "billing API"))
    result = ingest_transcript(project, transcript)
    assert result.mode == "full" and result.turns == 10
    record = load_session(project, "basic")
    assert record is not None and "billing API" in record.turns[0].text and "payments API" not in record.turns[0].text


def test_missing_transcript_is_a_clear_error(project: Path, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        ingest_transcript(project, tmp_path / "nope.jsonl")
    with pytest.raises(ValidationError, match="folder"):
        ingest_transcript(project, tmp_path)


def test_gitignore_keeps_sessions_private(project: Path, tmp_path: Path) -> None:
    gitignore = project / ".autology" / ".gitignore"
    assert "sessions/" in gitignore.read_text().splitlines()  # written by init
    gitignore.write_text("# Derived data\ncache/\ngraph/\n")  # a store made before session memory
    ingest_transcript(project, copy_fixture(BASIC, tmp_path / "t"))
    lines = gitignore.read_text().splitlines()
    assert lines[:3] == ["# Derived data", "cache/", "graph/"] and "sessions/" in lines
    ingest_transcript(project, copy_fixture(COMPACTED, tmp_path / "t"))
    assert gitignore.read_text().splitlines().count("sessions/") == 1


def test_no_secret_reaches_any_file_under_autology(project: Path, tmp_path: Path) -> None:
    for fixture in (SECRETS, BASIC, COMPACTED, MALFORMED):
        ingest_transcript(project, copy_fixture(fixture, tmp_path / "t"))
    hits = search_sessions(project, "credentials vault settings password token key")
    assert hits and any(h.session_id == "secrets" for h in hits)
    from autology_mcp.sessions.index import SessionIndex

    SessionIndex.for_root(project).close()  # checkpoint nothing half-way: read every byte on disk, WAL included
    files = [p for p in (project / ".autology").rglob("*") if p.is_file()]
    assert any(p.name == "sessions.sqlite" for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in PLANTED_SECRETS:
            assert secret.encode() not in data, f"{secret!r} found in {path}"
    record = load_session(project, "secrets")
    assert record is not None and record.title == "Move credentials for [REDACTED:stripe_key] out of settings"
    assert "[REDACTED:private_key]" in record.turns[0].text


def test_unicode_line_separators_inside_strings_do_not_split_lines(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "u.jsonl"
    prompt = "Rename the field\u2028then the column\x85and\u2029the index"
    transcript.write_text(
        user_line("u", prompt, "2026-10-03T10:00:00Z", "u-1").replace("\\u2028", "\u2028").replace("\\u0085", "\x85")
        .replace("\\u2029", "\u2029") + "\n",
        encoding="utf-8",
    )
    assert "\u2028" in transcript.read_text(encoding="utf-8")  # raw, as a JSON writer may leave it
    result = ingest_transcript(project, transcript)
    assert (result.turns, result.malformed) == (1, 0)
    record = load_session(project, "u")
    assert record is not None and record.turns[0].text == prompt
    assert ingest_transcript(project, transcript).mode == "unchanged"


def test_concurrent_ingests_lose_nothing(project: Path, tmp_path: Path) -> None:
    """Several sessions ending at once (one SessionEnd hook each): every session is stored and indexed."""
    import subprocess
    import sys

    transcripts = [copy_fixture(BASIC, tmp_path / "t", f"par-{i}.jsonl") for i in range(4)]
    code = (
        "import sys; from pathlib import Path; from autology_mcp.sessions.ingest import ingest_transcript; "
        "ingest_transcript(Path(sys.argv[1]), Path(sys.argv[2]))"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(project), str(t)]) for t in transcripts]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    assert sorted(p.name for p in session_files(project)) == [f"par-{i}.jsonl" for i in range(4)]
    found = {h.session_id for h in search_sessions(project, "exponential backoff jitter", limit=50)}
    assert found == {f"par-{i}" for i in range(4)}


def test_init_writes_the_sessions_line(tmp_path: Path) -> None:
    from autology_mcp.knowledge.store import NodeStore

    root = tmp_path / "fresh"
    root.mkdir()
    store = NodeStore(root)
    store.init()
    store.close()
    assert "sessions/" in (root / ".autology" / ".gitignore").read_text().splitlines()
