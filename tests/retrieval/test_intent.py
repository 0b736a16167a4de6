"""Intent heuristics: deterministic, and they only weight channels (every weight stays positive)."""

from __future__ import annotations

import pytest

from autology_mcp.retrieval.config import DEFAULT_CHANNEL_WEIGHTS
from autology_mcp.retrieval.intent import INTENTS, classify_intent


@pytest.mark.parametrize(
    "query, intent",
    [
        ("where is the token refreshed", "code_location"),
        ("parseRoomCode", "code_location"),
        ("what calls compute_invoice_total", "code_location"),
        ("src/net/websocket.py reconnect", "code_location"),
        ("how to configure the index", "doc_lookup"),
        ("README installation", "doc_lookup"),
        ("which modules are failing or outdated", "module_health"),
        ("tech debt in billing", "module_health"),
        ("why did we choose sqlite", "research"),
        ("why is there a TYPER_USE_RICH variable", "research"),  # a leading why outweighs one name
        ("Why does the UI show 48 kHz for CD-quality sources?", "research"),
        ("where is TYPER_USE_RICH read and why", "code_location"),
        ("alternatives to redis for sessions", "research"),
        ("websocket backoff", "general"),
    ],
)
def test_intents(query, intent):
    assert classify_intent(query).name == intent


def test_cues_explain_the_choice_and_words_match_whole():
    found = classify_intent("why is the decision outdated")
    assert found.name == "research"
    assert any(c.startswith("research:why") for c in found.cues)
    assert classify_intent("classification").name == "general"  # 'class' inside a word is no cue


@pytest.mark.parametrize("name", INTENTS)
def test_every_intent_keeps_every_channel(name):
    from autology_mcp.retrieval.intent import Intent

    weights = Intent(name).channel_weights(DEFAULT_CHANNEL_WEIGHTS)
    assert set(weights) == set(DEFAULT_CHANNEL_WEIGHTS)
    assert all(w > 0 for w in weights.values())


def test_deterministic():
    q = "where is the websocket reconnect defined and why"
    assert classify_intent(q) == classify_intent(q)


@pytest.mark.parametrize("query, lookup", [
    ("iter_bytes", True), ("`TYPER_USE_RICH`", True), ("HTTPError _preparse", True),
    ("where is compute_backoff defined", True), ("which file holds parseRoomCode", True),
    ("Fix `retry` option merging with URLSearchParams", False), ("where is the token refreshed", False),
    ("websocket backoff", False),
])
def test_a_lookup_is_names_alone_or_asks_where_a_name_is(query, lookup):
    from autology_mcp.common.text import code_identifiers
    from autology_mcp.retrieval.intent import asks_where

    assert asks_where(query, classify_intent(query), code_identifiers(query)) is lookup
