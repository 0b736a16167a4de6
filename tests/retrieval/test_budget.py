"""Output throttling: an answer never exceeds max_tokens, says what it cut, and is deterministic."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from retrieval_fixtures import project  # noqa: F401

from autology_mcp.retrieval.engine import search
from autology_mcp.retrieval.budget import MIN_TOKENS, compact_json, fit, measured, token_counter
from autology_mcp.retrieval.engine import compact_trace

WORDS = ["websocket", "reconnect", "backoff", "invoice", "cents", "cache", "eviction", "sessions", "redis",
         "billing", "deploy", "policy", "browser", "database", "quantum", "total", "refund"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(min_value=MIN_TOKENS, max_value=4000),
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
    filler=st.text(alphabet="abcdefghij ", max_size=1500),
    detail=st.sampled_from(["brief", "normal", "full"]),
    limit=st.integers(min_value=1, max_value=50),
)
def test_search_never_exceeds_its_budget(project, budget, words, filler, detail, limit):
    query = " ".join(words) + " " + filler
    answer = search(project.root, query, max_tokens=budget, detail=detail, limit=limit, store=project.autology.store)
    text = compact_json(answer)
    assert math.ceil(len(text) / 4) <= budget
    assert answer["cut"]["used_tokens"] <= budget
    assert answer["cut"]["budget_tokens"] == budget
    assert len(answer["hits"]) <= limit


def test_cut_counts_what_went(project):
    full = search(project.root, "websocket invoice cache sessions cents", max_tokens=20000, limit=20,
                  store=project.autology.store)
    small = search(project.root, "websocket invoice cache sessions cents", max_tokens=400, limit=20,
                   store=project.autology.store)
    assert full["cut"]["hits"] == 0 and full["cut"]["trace"] == "full"
    assert small["cut"]["hits"] == len(full["hits"]) - len(small["hits"]) > 0
    assert small["cut"]["trace"] in ("compact", "minimal")
    # what is kept is the best of the full answer, in the same order
    assert [h["ref"].split(":")[0] for h in small["hits"]] == [h["ref"].split(":")[0] for h in full["hits"]][: len(small["hits"])]


def test_detail_levels_change_snippets(project):
    brief = search(project.root, "websocket reconnect backoff", detail="brief", max_tokens=20000, store=project.autology.store)
    full = search(project.root, "websocket reconnect backoff", detail="full", max_tokens=20000, store=project.autology.store)
    assert all("\n" not in h["snippet"] for h in brief["hits"])
    assert max(h["snippet"].count("\n") for h in full["hits"]) > 2
    assert any("section" in h for h in full["hits"] if h["kind"] == "code")


def test_sizing_ignores_the_clock():
    answer = {"hits": [], "cut": {}, "trace": {"timings_ms": {"total": 1.5}, "freshness": {"code_index": {"checked": "recent", "age_s": 0.3}}}}
    other = {"hits": [], "cut": {}, "trace": {"timings_ms": {"total": 12345.25}, "freshness": {"code_index": {"checked": "refreshed", "age_s": 12.0}}}}
    assert len(measured(answer)) == len(measured(other))
    count, _ = token_counter("chars")
    a = fit(answer, 300, compact_trace, count)
    assert a["cut"]["used_tokens"] <= 300


def test_chars_counter():
    count, name = token_counter("chars")
    assert name == "chars/4" and count("abcd") == 1 and count("abcde") == 2
