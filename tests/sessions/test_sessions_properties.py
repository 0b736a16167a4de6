"""Properties of the session file format and of incremental ingest."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sessions_helpers import BASIC, COMPACTED

from autology_mcp.knowledge.store import NodeStore
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.common.redact import redact
from autology_mcp.sessions.store import SessionRecord, load_session, parse, render
from autology_mcp.sessions.transcript import ParseState, Turn

texts = st.text(min_size=1, max_size=200).map(redact).filter(str.strip)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant", "compact_summary"]), texts), max_size=15),
    texts,
    st.integers(min_value=0, max_value=10**9),
    st.text(max_size=300).map(redact),
)
def test_session_file_round_trip(turns: list[tuple[str, str]], title: str, offset: int, handoff: str) -> None:
    state = ParseState(turns=len(turns), first_prompt=title, files_modified=["a/b.py"], tool_counts={"Edit": 2})
    record = SessionRecord(
        session_id="s-1",
        transcript="/x/s-1.jsonl",
        size=offset + 5,
        mtime_ns=123,
        offset=offset,
        sha256="ab" * 32,
        state=state,
        turns=[Turn(i, role, text, "2026-01-01T00:00:00Z") for i, (role, text) in enumerate(turns)],
        handoff=handoff,
    )
    back = parse(render(record))
    assert back.turns == record.turns
    assert back.state == record.state
    assert (back.session_id, back.offset, back.sha256, back.size) == ("s-1", offset, "ab" * 32, offset + 5)
    assert back.handoff == handoff
    assert render(back) == render(record)


def _project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="autology-prop-")) / "project"
    root.mkdir()
    NodeStore(root).init()
    return root


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([BASIC, COMPACTED]), st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=3))
def test_ingesting_in_pieces_equals_ingesting_at_once(fixture: Path, cuts: list[float]) -> None:
    """Wherever Claude Code happens to be in writing the transcript (even mid-line), ingesting
    each state as it grows ends with the same session as ingesting the finished transcript once."""
    data = fixture.read_bytes()
    whole_root, piece_root = _project(), _project()
    try:
        whole = whole_root.parent / "whole" / "s.jsonl"
        whole.parent.mkdir()
        whole.write_bytes(data)
        ingest_transcript(whole_root, whole, index=False)
        growing = piece_root.parent / "growing" / "s.jsonl"
        growing.parent.mkdir()
        for cut in sorted(cuts):
            growing.write_bytes(data[: int(cut * len(data))])
            ingest_transcript(piece_root, growing, index=False)
        growing.write_bytes(data)
        ingest_transcript(piece_root, growing, index=False)
        a, b = load_session(whole_root, "s"), load_session(piece_root, "s")
        assert a is not None and b is not None
        assert b.turns == a.turns and b.handoff == a.handoff and b.title == a.title
        assert (b.offset, b.sha256) == (a.offset, a.sha256)
    finally:
        shutil.rmtree(whole_root.parent, ignore_errors=True)
        shutil.rmtree(piece_root.parent, ignore_errors=True)
