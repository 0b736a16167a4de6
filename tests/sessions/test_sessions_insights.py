"""Insight mining: triggers, quality scoring (threshold 0.4), de-duplication, capture, autology_analyze."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessions_helpers import BASIC, COMPACTED, MALFORMED, SECRETS, copy_fixture

from autology_mcp.knowledge.analyze import render
from autology_mcp.knowledge.service import Autology
from autology_mcp.sessions.capture import HEALTH_CATEGORIES as CATEGORIES
from autology_mcp.sessions.capture import capture, collect
from autology_mcp.sessions.capture import health_report as analyze
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.insights import THRESHOLD, merge_duplicates, mine_turns, quality, sentences
from autology_mcp.sessions.transcript import Turn


def mine(text: str) -> list:
    return mine_turns([Turn(0, "assistant", text, "2026-01-01T00:00:00Z")], "s", THRESHOLD)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We decided to store sessions as JSONL files under the autology folder.", "decision"),
        ("Let's go with SQLite FTS5 for the session index, it is already a dependency.", "decision"),
        ("The fix was to close the connection before deleting the database file.", "discovery"),
        ("It turned out the watcher fired twice for every atomic rename.", "discovery"),
        ("From now on every node write goes through the store's write lock.", "convention"),
        ("Never print to stdout in the MCP server, it corrupts the protocol stream.", "principle"),
    ],
)
def test_triggers_and_kinds(text: str, kind: str) -> None:
    found = mine(text)
    assert [(i.kind, i.text) for i in found] == [(kind, text)]
    assert found[0].score >= THRESHOLD


@pytest.mark.parametrize(
    "text",
    [
        "Should we always use the write lock?",  # a question
        "Never mind.",  # too short, and UI noise
        "Always allow",  # a permission prompt
        "Maybe we should always retry, I think, but I'm not sure",  # hedged, weak trigger
        "The weather is nice today and the build is green.",  # no trigger
        "x = {a[0]: b[1] for a, b in zip(always_list, never_list)} # always",  # code
    ],
)
def test_noise_is_below_the_threshold(text: str) -> None:
    assert mine(text) == []


def test_quality_prefers_conclusive_complete_sentences() -> None:
    strong = quality("We decided to keep the export idempotent by writing to a dated key.", 1.0)
    weak = quality("always the export to a dated key", 0.6)
    hedged = quality("Maybe we decided to keep the export idempotent by writing to a dated key.", 1.0)
    assert strong == 1.0 and strong > hedged and strong > weak
    assert quality("Short one.", 1.0) == 0.0


def test_sentences_skip_tool_lines_code_and_tables() -> None:
    text = "Intro line.\n[tool Bash always]\n```\nnever in code\n```\n| always | table |\n- **We decided** to go. Then more."
    assert sentences(text) == ["Intro line.", "We decided to go.", "Then more."]


def test_near_duplicates_merge_keeping_the_best() -> None:
    a = mine("We decided to use exponential backoff with full jitter for the payments client.")
    b = mine("we decided to use exponential backoff with full jitter for the payments client")
    merged = merge_duplicates(a + b)
    assert len(merged) == 1 and merged[0].text.endswith(".")


def ingest_fixtures(project: Path, tmp_path: Path) -> None:
    for fixture in (BASIC, COMPACTED, MALFORMED, SECRETS):
        ingest_transcript(project, copy_fixture(fixture, tmp_path / "t"))


def test_collect_marks_insights_already_in_the_graph(project: Path, tmp_path: Path) -> None:
    ingest_fixtures(project, tmp_path)
    autology = Autology.open(project)
    try:
        before = collect(project, autology.store.index)
        assert {i.kind for i in before} >= {"decision", "discovery", "principle"}
        assert all(i.score >= THRESHOLD and i.duplicate_of is None for i in before)
        known = autology.capture(
            "Exponential backoff with jitter for the HTTP client",
            "## Context\n503 storms.\n## Decision\nWe use exponential backoff with full jitter, capped at 30 seconds "
            "and 5 attempts, because fixed delays synchronise the clients and make the storm worse.\n"
            "## Alternatives\nFixed delays.\n## Consequences\nSlower retries.",
            type="decision",
        ).id
        after = collect(project, autology.store.index)
        backoff = next(i for i in after if "exponential backoff" in i.text)
        assert backoff.duplicate_of == known
        assert sum(i.duplicate_of is None for i in after) == len(before) - 1
        assert collect(project, autology.store.index, session_id="malformed")[0].kind == "discovery"
        assert collect(project, autology.store.index, threshold=0.9) == [i for i in after if i.score >= 0.9]
    finally:
        autology.close()


def test_capture_makes_needs_review_nodes_once(project: Path, tmp_path: Path) -> None:
    ingest_fixtures(project, tmp_path)
    autology = Autology.open(project)
    try:
        insights = collect(project, autology.store.index)
        report = capture(autology, insights)
        assert len(report.captured) == len(insights)
        for item in report.captured:
            node = autology.get(item["id"])
            assert node.status == "needs_review" and node.confidence == 0.7
            assert node.source == "hook_session_end" and node.session == item["session_id"]
            assert node.type == item["type"]
        decision = next(autology.get(c["id"]) for c in report.captured if c["type"] == "decision")
        assert "## Alternatives" in decision.content  # a valid ADR, to be completed on review
        again = collect(project, autology.store.index)
        assert all(i.duplicate_of for i in again)  # captured once: now known
        assert capture(autology, again).captured == []
    finally:
        autology.close()


def test_analyze_reports_insights(project: Path, tmp_path: Path) -> None:
    assert "insights" in CATEGORIES
    autology = Autology.open(project)
    try:
        empty = analyze(autology.store, ["insights"])["categories"]["insights"]
        assert (empty["score"], empty["considered"], empty["count"]) == (100, 0, 0)
        ingest_fixtures(project, tmp_path)
        report = analyze(autology.store)
        category = report["categories"]["insights"]
        assert category["count"] == category["considered"] > 0 and category["score"] == 0
        kinds = {f["kind"] for f in category["findings"]}
        assert "uncaptured_decision" in kinds
        finding = category["findings"][0]
        assert finding["id"] is None and finding["session"] and finding["suggestedType"] in ("decision", "convention", "issue")
        assert "session basic turn" in render(report) or "session" in render(report)
        (project / ".autology" / "config.toml").write_text("[sessions]\nenabled = false\n")
        off = analyze(autology.store, ["insights"])["categories"]["insights"]
        assert (off["score"], off["count"]) == (100, 0)
        (project / ".autology" / "config.toml").write_text("[sessions]\nenabled = 1\n")
        broken = analyze(autology.store, ["insights"])["categories"]["insights"]
        assert broken["findings"][0]["kind"] == "sessions_config_error"
    finally:
        autology.close()


async def test_analyze_tool_accepts_insights(project: Path, tmp_path: Path) -> None:
    import json

    from mcp import Client

    from autology_mcp.server.app import build_server

    ingest_fixtures(project, tmp_path)
    autology = Autology.open(project)
    try:
        async with Client(build_server(autology)) as client:
            result = await client.call_tool("autology_analyze", {"categories": ["insights"]})
            report = result.structured_content or json.loads(result.content[0].text)
            assert list(report["categories"]) == ["insights"] and report["categories"]["insights"]["count"] > 0
    finally:
        autology.close()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

trigger_pieces = st.sampled_from(
    ["we decided", "decided to", "the decision was", "let's go with", "we're going with", "we chose", "settled on",
     "opted for", "we'll use", "the fix was", "root cause", "was caused by", "it turned out", "the bug was that",
     "the culprit", "we learned that", "lesson learned", "fixed it by", "by convention", "the rule is",
     "from now on", "going forward", "always", "never", "must not", "We ", "the ", "code ", ". ", "\n", "DECIDED"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(trigger_pieces, st.text(max_size=8)), max_size=12).map("".join))
def test_property_the_turn_prefilter_never_hides_a_trigger(text: str) -> None:
    from autology_mcp.sessions.insights import _TRIGGER_WORDS, _TRIGGERS

    if any(pattern.search(text) for _, _, pattern in _TRIGGERS):
        assert any(word in text.lower() for word in _TRIGGER_WORDS)


def test_a_label_before_the_statement_is_dropped() -> None:
    assert sentences("2. Key decisions: we decided to keep the export idempotent.") == [
        "We decided to keep the export idempotent."
    ]
    assert sentences("The root cause is a scan: no index.\nnpm install always works") == [
        "The root cause is a scan: no index.",
        "npm install always works",
    ]
