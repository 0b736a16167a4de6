"""Heuristic type classification (autology_mcp.knowledge.classify) and the ADR format (autology_mcp.knowledge.adr)."""

from __future__ import annotations

from core_helpers import ADR

from autology_mcp.knowledge.adr import ADR_SECTIONS, ADR_TEMPLATE, adr_sections_present, missing_adr_sections
from autology_mcp.knowledge.classify import classify


def test_clear_signals_give_0_7():
    result = classify("We decided to switch to Postgres", "We chose Postgres instead of MySQL because of JSONB.")
    assert result.type.value == "decision"
    assert result.confidence == 0.7
    assert result.clear


def test_no_signal_is_below_the_minimum():
    result = classify("Misc", "Some text.")
    assert result.confidence < 0.5
    assert not result.clear


def test_a_tie_is_not_clear():
    # one component word and one issue word, both in the title: equal scores
    result = classify("service bug", "")
    assert result.scores["component"] == result.scores["issue"]
    assert not result.clear


def test_title_counts_twice():
    assert classify("Flaky", "").scores["issue"] == 2
    assert classify("Note", "flaky").scores["issue"] == 1


def test_adr_sections_make_a_decision():
    assert classify("Search engine", ADR).type.value == "decision"


def test_classification_is_deterministic():
    args = ("Worker service retry pattern", "The worker module uses a retry approach with backoff.")
    assert classify(*args) == classify(*args)


def test_adr_sections():
    assert adr_sections_present(ADR) == set(ADR_SECTIONS)
    assert missing_adr_sections(ADR) == []
    assert missing_adr_sections("## Context\nx\n## Alternatives considered\ny") == ["Decision", "Consequences"]
    assert missing_adr_sections("**Context**: x\n**Options**: y") == ["Decision", "Consequences"]
    assert missing_adr_sections("context decision alternatives consequences in prose") == list(ADR_SECTIONS)
    assert missing_adr_sections(ADR_TEMPLATE) == []


def test_a_stated_decision_outweighs_a_component_word_in_the_title():
    """Issue 16: this text was stored as a component because its title names a client."""
    text = "We decided that all clients default to Timeout(timeout=5.0) so that no request can hang forever."
    result = classify("Client timeout default", text)
    assert result.type.value == "decision" and result.clear
    assert result.scores["decision"] > result.scores["component"]


def test_strong_phrases_count_three_times():
    assert classify("Note", "We opted for uv.").scores["decision"] == 1 + 3  # "opted", and the phrase
    assert classify("Note", "The decision was made long ago.").scores["decision"] == 1 + 3  # "decision" and the phrase
    assert classify("We decided", "").scores["decision"] == 2 + 6
