"""The sessions channel on a real session index (a transcript ingested with session memory's own API)."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_fixtures import make_project

from autology_mcp.retrieval.engine import search

TRANSCRIPT = Path(__file__).resolve().parents[1] / "sessions" / "fixtures" / "basic.jsonl"


@pytest.fixture(scope="module")
def with_session(tmp_path_factory):
    ingest = pytest.importorskip("autology_mcp.sessions.ingest")
    proj = make_project(tmp_path_factory.mktemp("sessions") / "proj", with_index=False)
    ingest.ingest_transcript(proj.root, TRANSCRIPT)
    yield proj
    proj.autology.close()


def test_session_chunks_and_handoffs_are_hits(with_session):
    answer = search(with_session.root, "retry backoff payments 503", store=with_session.autology.store)
    sessions = [h for h in answer["hits"] if h["kind"] in ("session_chunk", "handoff")]
    assert sessions, answer["trace"]["channels"]
    hit = sessions[0]
    assert hit["session_id"] and hit["ref"].startswith(hit["session_id"] + ":")
    assert hit["node_id"] is None and hit["path"] is None
    assert "sessions" in hit["channels"]
    assert hit["snippet"]
    status = {c["name"]: c for c in answer["trace"]["channels"]}["sessions"]
    assert status["status"] == "ok" and status["candidates"] >= 1


def test_sessions_scope_alone(with_session):
    answer = search(with_session.root, "retry backoff", scope=["sessions"], store=with_session.autology.store)
    assert answer["hits"] and {h["kind"] for h in answer["hits"]} <= {"session_chunk", "handoff"}


def test_disabled_session_memory_is_reported(with_session):
    cfg = with_session.root / ".autology" / "config.toml"
    cfg.write_text("[sessions]\nenabled = false\n")
    try:
        answer = search(with_session.root, "retry backoff", store=with_session.autology.store)
    finally:
        cfg.unlink()
    status = {c["name"]: c for c in answer["trace"]["channels"]}["sessions"]
    assert status["status"] == "disabled"
    assert not [h for h in answer["hits"] if h["kind"] in ("session_chunk", "handoff")]
