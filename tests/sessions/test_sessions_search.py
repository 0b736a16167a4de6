"""The search contract unified retrieval builds on: search_sessions / sessions_enabled / SessionHit."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest
from sessions_helpers import BASIC, COMPACTED, MALFORMED, SECRETS, copy_fixture

from autology_mcp.common.errors import ValidationError
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.search import SessionHit, search_sessions, sessions_enabled


def ingest_all(project: Path, tmp_path: Path) -> None:
    for fixture in (BASIC, COMPACTED, MALFORMED, SECRETS):
        ingest_transcript(project, copy_fixture(fixture, tmp_path / "transcripts"))


def test_hit_fields_are_the_contract(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    hits = search_sessions(project, "exponential backoff jitter")
    assert hits and all(isinstance(h, SessionHit) for h in hits)
    assert [f.name for f in dataclasses.fields(SessionHit)] == [
        "doc_id", "doc_type", "session_id", "title", "text", "score", "timestamp", "turn_start", "turn_end",
    ]
    top = hits[0]
    assert top.session_id == "basic"
    assert top.title == "Retry backoff for the HTTP client"
    assert top.text.startswith(top.title + "\n")
    assert top.doc_type in ("session_chunk", "handoff")
    assert top.doc_id == ("basic:handoff" if top.doc_type == "handoff" else f"basic:{top.doc_id.split(':')[1]}")
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert top.timestamp.startswith("2026-10-02T")
    assert 0 <= top.turn_start <= top.turn_end
    with pytest.raises(dataclasses.FrozenInstanceError):
        top.score = 0.5  # type: ignore[misc]


def test_chunk_doc_ids_and_proof_span(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    hits = search_sessions(project, "staging export orders dated key", limit=50)
    chunks = [h for h in hits if h.doc_type == "session_chunk" and h.session_id == "compacted"]
    assert chunks
    for hit in chunks:
        sid, n = hit.doc_id.split(":")
        assert sid == "compacted" and n.isdigit()
        assert hit.turn_start <= hit.turn_end < 8  # the compacted fixture keeps 8 turns


def _all_scored(project: Path, query: str) -> dict[str, float]:
    """Every candidate's score, handoffs included (the ranking before repeated handoffs are left out)."""
    from autology_mcp.common.text import node_query_terms
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.search import ranked_documents

    hits = ranked_documents(SessionIndex.for_root(project), node_query_terms(query), 50, load_sessions_config(project))
    return {h.doc_id: h.score for h in hits}


def test_handoff_boost_is_configurable(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    default = _all_scored(project, "payments API backoff")
    (project / ".autology" / "config.toml").write_text("[sessions]\nboosts = { handoff = 0.0 }\n")
    unboosted = _all_scored(project, "payments API backoff")
    assert unboosted["basic:0"] == default["basic:0"]  # chunks: +0 either way
    assert default["basic:handoff"] == pytest.approx(min(1.0, unboosted["basic:handoff"] + 0.08), abs=1e-3)


def test_no_time_decay_recency_only_breaks_ties(project: Path, tmp_path: Path) -> None:
    transcripts = tmp_path / "t"
    old = copy_fixture(BASIC, transcripts, "old-session.jsonl")
    new = transcripts / "new-session.jsonl"
    new.write_text(old.read_text().replace("2026-10-02T", "2026-11-20T"))
    ingest_transcript(project, old)
    ingest_transcript(project, new)
    hits = search_sessions(project, "exponential backoff jitter", limit=50)
    by_id = {h.doc_id: h for h in hits}
    assert by_id["old-session:0"].score == by_id["new-session:0"].score  # same text: same score
    order = [h.doc_id for h in hits]
    assert order.index("new-session:0") < order.index("old-session:0")  # the tie goes to the recent one


def test_empty_cases(project: Path, tmp_path: Path) -> None:
    assert search_sessions(project, "backoff") == []  # nothing ingested yet
    ingest_all(project, tmp_path)
    assert search_sessions(project, "") == []
    assert search_sessions(project, "   ") == []
    assert search_sessions(project, "zebra quokka") == []
    assert search_sessions(project, "backoff", limit=0) == []
    assert len(search_sessions(project, "the", limit=2)) <= 2


def test_disabled_returns_nothing(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    assert sessions_enabled(project) is True
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\nenabled = false\n")
    assert sessions_enabled(project) is False
    assert search_sessions(project, "backoff") == []


def test_bad_config_is_a_clear_error(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\nenabled = 'yes'\n")
    with pytest.raises(ValidationError, match="enabled"):
        sessions_enabled(project)
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\nboosts = { nodes = 0.1 }\n")
    with pytest.raises(ValidationError, match="handoff"):
        search_sessions(project, "x")


def test_index_is_rebuilt_when_deleted_or_corrupt(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    before = [h.doc_id for h in search_sessions(project, "celery beat")]
    db = project / ".autology" / "cache" / "sessions.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    assert [h.doc_id for h in search_sessions(project, "celery beat")] == before
    from autology_mcp.sessions.index import SessionIndex

    SessionIndex.for_root(project).close()
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    assert [h.doc_id for h in search_sessions(project, "celery beat")] == before
    sqlite3.connect(db).execute("SELECT COUNT(*) FROM docs").fetchone()


def test_search_follows_session_files(project: Path, tmp_path: Path) -> None:
    """The index is derived from .autology/sessions/: a deleted session file disappears from results."""
    ingest_all(project, tmp_path)
    assert any(h.session_id == "compacted" for h in search_sessions(project, "celery beat"))
    (project / ".autology" / "sessions" / "compacted.jsonl").unlink()
    assert not any(h.session_id == "compacted" for h in search_sessions(project, "celery beat"))


def test_search_does_not_write_when_nothing_changed(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    search_sessions(project, "warm up")
    files = sorted((project / ".autology").rglob("*"))
    before = {p: p.stat().st_mtime_ns for p in files if p.is_file() and not p.name.endswith(("-wal", "-shm"))}
    for _ in range(5):
        search_sessions(project, "retry backoff payments")
    after = {p: p.stat().st_mtime_ns for p in before}
    assert after == before


def test_index_rebuilds_from_session_files_alone(project: Path, tmp_path: Path) -> None:
    """Claude Code cleans up old transcripts: the session files are enough to rebuild everything."""
    import shutil

    ingest_all(project, tmp_path)
    before = [(h.doc_id, h.score) for h in search_sessions(project, "retry backoff celery index", limit=50)]
    shutil.rmtree(tmp_path / "transcripts")
    from autology_mcp.sessions.index import SessionIndex

    index = SessionIndex.for_root(project)
    index.close()
    shutil.rmtree(project / ".autology" / "cache")
    assert [(h.doc_id, h.score) for h in search_sessions(project, "retry backoff celery index", limit=50)] == before
    assert index.rebuild() == 4
    assert [(h.doc_id, h.score) for h in search_sessions(project, "retry backoff celery index", limit=50)] == before


def test_a_damaged_session_file_is_skipped_not_fatal(project: Path, tmp_path: Path) -> None:
    ingest_all(project, tmp_path)
    (project / ".autology" / "sessions" / "basic.jsonl").write_text("{not a session file\n")
    (project / ".autology" / "sessions" / "stray.jsonl").write_bytes(b"\xff\xfe garbage")
    hits = search_sessions(project, "celery beat backoff")
    assert hits and all(h.session_id not in ("basic", "stray") for h in hits)
    from autology_mcp.sessions.index import SessionIndex

    with SessionIndex.for_root(project).reading() as conn:
        errors = dict(conn.execute("SELECT session_id, error FROM sources WHERE error IS NOT NULL").fetchall())
    assert set(errors) == {"basic", "stray"} and "no header" in errors["basic"]


def test_common_terms_only_count_towards_coverage(project: Path, tmp_path: Path, monkeypatch) -> None:
    from autology_mcp.sessions import search as search_module

    ingest_all(project, tmp_path)
    query = "client session staging export orders"
    plain = search_sessions(project, query, limit=50)
    monkeypatch.setattr(search_module, "COMMON_MIN", 1)
    monkeypatch.setattr(search_module, "COMMON_SHARE", 0.3)  # 9 documents: a term in more than 2 is "very common"
    guarded = search_sessions(project, query, limit=50)
    assert {h.doc_id for h in guarded} < {h.doc_id for h in plain}
    # only documents holding the rare term ("client", in 2 documents) are candidates now; the very
    # common terms still count towards their coverage
    assert guarded and all("client" in h.text.lower() for h in guarded)
    assert [h.doc_id for h in guarded] == [h.doc_id for h in plain if "client" in h.text.lower()]


def test_a_replaced_index_file_is_picked_up(project: Path, tmp_path: Path) -> None:
    """Another process rebuilt cache/sessions.sqlite as a new file: this process opens the new file."""
    import os
    import shutil

    from autology_mcp.sessions.index import SessionIndex

    ingest_all(project, tmp_path)
    index = SessionIndex.for_root(project)
    first = index.connection()
    db = index.path
    shutil.copyfile(db, tmp_path / "copy.sqlite")
    (tmp_path / "copy.sqlite").replace(db)  # a new inode where the open file was
    second = index.connection()
    assert second is not first
    assert index._conn_inode == os.stat(db).st_ino
    assert search_sessions(project, "celery beat")


def test_a_handoff_is_left_out_when_its_session_has_a_chunk_in_the_list(project: Path, tmp_path: Path) -> None:
    """Issue 15: the handoff repeats its chunks (in cut excerpts), so it only stands in for a session
    none of whose chunks made the list."""
    ingest_all(project, tmp_path)
    scored = _all_scored(project, "payments API backoff")
    assert scored["basic:handoff"] >= max(v for k, v in scored.items() if k.startswith("basic:") and k != "basic:handoff")
    hits = search_sessions(project, "payments API backoff", limit=10)
    assert "basic:handoff" not in [h.doc_id for h in hits]  # ranked first before, but basic's chunks are listed
    assert any(h.doc_id.startswith("basic:") for h in hits)


def test_without_repeated_handoffs_keeps_a_lone_handoff() -> None:
    from autology_mcp.sessions.search import without_repeated_handoffs

    def hit(doc_id: str) -> SessionHit:
        sid, n = doc_id.split(":")
        return SessionHit(doc_id, "handoff" if n == "handoff" else "session_chunk", sid, "t", "x", 0.5, "", 0, 0)

    ranked = [hit("a:handoff"), hit("a:0"), hit("b:handoff"), hit("c:1"), hit("a:1")]
    assert [h.doc_id for h in without_repeated_handoffs(ranked, 10)] == ["a:0", "b:handoff", "c:1", "a:1"]
    assert [h.doc_id for h in without_repeated_handoffs(ranked, 1)] == ["a:0"]
    # a session whose chunks all fall below the limit keeps its handoff in the list
    ranked = [hit("a:handoff"), hit("b:0"), hit("c:0"), hit("a:5")]
    assert [h.doc_id for h in without_repeated_handoffs(ranked, 2)] == ["a:handoff", "b:0"]
