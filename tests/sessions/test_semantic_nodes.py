"""Semantic recall for knowledge nodes (issue 37): with the optional extra on, the node search re-ranks its
lexical matches by the records' vectors, in ``autology_query`` and in unified search alike; off, nothing
changes. On a tiny model the tests write (tests/sessions/semantic_models.py): nothing is downloaded."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from semantic_models import write_tiny_static_model

from autology_mcp.cli.main import main
from autology_mcp.knowledge.models import KnowledgeNode, NodeType
from autology_mcp.knowledge.search import DENSE_WEIGHT, Hit, dense_reranked
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval.engine import search
from autology_mcp.semantic.encoder import available
from autology_mcp.semantic.nodes import dense_for, pieces

needs_extra = pytest.mark.skipif(not available(), reason="the optional extra is not installed (autology-mcp[semantic])")

WORDS = """we the a to of and for with is are when why do it on in this that failed requests request sent again
    server fails failures logged every line log logging format writes each file network client""".split()
SYNONYMS = [["backoff", "resend", "retried"]]
RETRY = ("Network failures", "Requests are sent again with backoff when the server fails.")
LOGGING = ("Request logging", "Every request is logged: requests, failed requests and their failures, one line each.")
QUESTION = "why are failed requests retried"  # "retried" is in no record; its synonym "backoff" is in RETRY's


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    service = Autology.open(root)
    try:
        for title, content in (RETRY, LOGGING):
            service.capture(title, content, type="convention")
    finally:
        service.close()
    return root


def titles(root: Path, query: str) -> list[str]:
    """``autology query``'s order (the CLI, like the tool, hands the node search the records' vectors)."""
    service = Autology.open(root)
    try:
        return [h.node.title for h in service.query(query, dense=dense_for(root))]
    finally:
        service.close()


def _tool_titles(root: Path, query: str) -> list[str]:
    from mcp import Client

    from autology_mcp.server.app import build_server

    async def ask() -> list[str]:
        service = Autology.open(root)
        try:
            async with Client(build_server(service)) as client:
                result = await client.call_tool("autology_query", {"query": query})
                return [h["node"]["title"] for h in result.structured_content["result"]]
        finally:
            service.close()

    return anyio.run(ask)


def unified_titles(root: Path, query: str) -> list[str]:
    return [h["title"] for h in search(root, query, scope=["nodes"])["hits"]]


@needs_extra
def test_the_vectors_put_the_record_that_means_the_question_first_everywhere(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lexical = titles(project, QUESTION)
    assert lexical[0] == LOGGING[0]  # by words, the record that says "failed requests" most
    model = write_tiny_static_model(tmp_path / "tiny-model", WORDS, SYNONYMS)
    shutil.rmtree(project / ".autology" / "cache")  # as in a fresh clone: node files, no index yet
    assert main(["--root", str(project), "semantic", "enable", "--path", str(model)]) == 0
    assert "✓ 2 node piece(s) embedded" in capsys.readouterr().out
    assert titles(project, QUESTION)[0] == RETRY[0]  # by meaning: "retried" is what "backoff" does
    assert unified_titles(project, QUESTION)[0] == RETRY[0]  # the same order in unified search and the hooks
    # what must not move: a question both by words and by meaning about logging keeps logging first
    assert titles(project, "request logging format")[0] == LOGGING[0]
    assert unified_titles(project, "request logging format")[0] == LOGGING[0]
    assert main(["--root", str(project), "query", QUESTION, "--json"]) == 0  # the CLI
    assert json.loads(capsys.readouterr().out)[0]["node"]["title"] == RETRY[0]
    assert _tool_titles(project, QUESTION)[0] == RETRY[0]  # the autology_query tool over MCP
    assert main(["--root", str(project), "semantic", "status"]) == 0
    assert "knowledge nodes with vectors: 2" in capsys.readouterr().out
    assert main(["--root", str(project), "semantic", "disable"]) == 0
    assert titles(project, QUESTION) == lexical  # off again: the lexical order


@needs_extra
def test_a_node_without_a_vector_yet_leaves_the_lexical_order(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write_tiny_static_model(tmp_path / "tiny-model", WORDS, SYNONYMS)
    assert main(["--root", str(project), "semantic", "enable", "--path", str(model)]) == 0
    service = Autology.open(project)
    try:
        service.capture("Failed requests log", "Failed requests are logged with the request line.", type="convention")
        order = [h.node.title for h in service.query(QUESTION, dense=dense_for(project))]
    finally:
        service.close()
    assert order[0] != RETRY[0]  # the new record has no vector until the next sync: the lexical order stands
    assert main(["--root", str(project), "semantic", "sync"]) == 0
    assert "✓ 1 node piece(s) embedded" in capsys.readouterr().out
    assert titles(project, QUESTION)[0] == RETRY[0]


WHEN = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _hit(i: int, score: float) -> Hit:
    return Hit(KnowledgeNode(f"n{i}", NodeType.CONVENTION, f"record {i}", "text", WHEN, WHEN), score)


@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(-1.0, 1.0).map(lambda x: round(x, 3))), min_size=1,
                max_size=12), st.floats(-0.5, 0.5))
def test_the_re_ranking_keeps_scores_in_range_and_ignores_a_shift_of_every_similarity(
        rows: list[tuple[float, float]], shift: float) -> None:
    rows = sorted(rows, key=lambda r: -r[0])
    hits = [_hit(i, round(score, 4)) for i, (score, _) in enumerate(rows)]
    sims = {f"n{i}": sim for i, (_, sim) in enumerate(rows)}
    first = dense_reranked(hits, lambda ids: {i: sims[i] for i in ids})
    moved = dense_reranked(hits, lambda ids: {i: sims[i] + shift for i in ids})
    assert sorted(h.node.id for h in first) == sorted(h.node.id for h in hits)  # the same records, re-ordered
    assert all(0.0 <= h.score <= 1.0 for h in first)
    assert [h.score for h in first] == sorted((h.score for h in first), reverse=True)
    # what counts is the similarity above the candidates' mean: moving every one together changes no score
    assert [h.score for h in moved] == pytest.approx([h.score for h in first], abs=2e-4)
    best = max(rows, key=lambda r: r[1])[1]
    if best > sum(s for _, s in rows) / len(rows) and len(rows) > 1:
        top = first[0]
        assert top.score >= max(h.score for h in hits) / (1 + DENSE_WEIGHT) - 1e-4


def test_a_similarity_missing_for_any_candidate_changes_nothing() -> None:
    hits = [_hit(0, 0.6), _hit(1, 0.5)]
    assert dense_reranked(hits, lambda ids: {"n1": 0.9}) == hits


def test_a_record_is_embedded_as_its_title_before_runs_of_paragraphs() -> None:
    assert pieces("Title only", "") == ["Title only"]
    long = "\n\n".join(f"paragraph {i} " + "x" * 400 for i in range(40))
    got = pieces("T", long)
    assert all(p.startswith("T\n") for p in got) and 2 <= len(got) <= 12
    assert all(len(p) <= 900 + 450 for p in got)
