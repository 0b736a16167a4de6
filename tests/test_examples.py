"""The examples/ directory: the tonearm knowledge base is clean, complete and in step with the script
that generates it, and examples/demo.py runs a whole MCP session over stdio and exits 0."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.models import NODE_TYPES, RELATION_TYPES
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.store import NodeStore

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PROJECT = EXAMPLES / "tonearm"


def copy_example(tmp_path: Path) -> Path:
    """The committed files of the example (derived cache/ and graph/ left out)."""
    dest = tmp_path / "tonearm"
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns("cache", "graph"))
    return dest


def load_builder():
    spec = importlib.util.spec_from_file_location("build_knowledge_base", EXAMPLES / "build_knowledge_base.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def snapshot(root: Path) -> tuple[set, set]:
    """Everything about a store except ids and timestamps: nodes and relations by title."""
    autology = Autology.open(root)
    try:
        nodes = [hit.node for hit in autology.query(limit=100, max_chars=10_000_000)]  # every node, whole
    finally:
        autology.close()
    title = {n.id: n.title for n in nodes}
    node_facts = {
        (n.type, n.title, n.content, tuple(n.tags), tuple(n.references), n.status, n.source, n.session, n.confidence)
        for n in nodes
    }
    relation_facts = {
        (n.title, r.type, title[r.target], r.description, r.confidence) for n in nodes for r in n.relations
    }
    return node_facts, relation_facts


def test_example_knowledge_base_is_clean_and_covers_every_type(tmp_path):
    root = copy_example(tmp_path)
    store = NodeStore(root)
    try:
        report = diagnose(store)
    finally:
        store.close()
    assert report.ok, [p.__dict__ for p in report.problems]
    assert report.nodes >= 30

    autology = Autology.open(root)
    try:
        status = autology.status()
        superseded = autology.query(limit=100)
    finally:
        autology.close()
    assert status.totalNodes == report.nodes
    assert status.malformedFiles == []
    assert set(NODE_TYPES) == {t for t, n in status.nodesByType.items() if n > 0}
    assert set(RELATION_TYPES) == {t for t, n in status.relationsByType.items() if n > 0}
    assert status.nodesByStatus["superseded"] >= 1
    assert status.nodesByStatus["needs_review"] >= 1

    # Every superseded node is the target of a 'supersedes' relation from its replacement.
    nodes = [hit.node for hit in superseded]
    replaced = {r.target for n in nodes for r in n.relations if r.type == "supersedes"}
    for node in nodes:
        if node.status == "superseded":
            assert node.id in replaced, node.title
        assert node.tags, f"{node.title} has no tags"
        assert node.references, f"{node.title} has no references"


def test_committed_example_matches_the_build_script(tmp_path):
    builder = load_builder()
    generated = tmp_path / "generated"
    generated.mkdir()
    ids = builder.build(generated)
    assert len(ids) == len(builder.NODES)
    assert snapshot(generated) == snapshot(copy_example(tmp_path)), (
        "examples/tonearm/.autology/ is out of date: run python examples/build_knowledge_base.py"
    )


@pytest.mark.slow
def test_demo_runs_a_whole_session_over_stdio(tmp_path):
    before = sorted((p.relative_to(PROJECT), p.read_bytes()) for p in (PROJECT / ".autology" / "nodes").rglob("*.md"))
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    too_wide = [line for line in out.splitlines() if len(line) > 80 and " " in line.strip()]
    assert too_wide == []  # fits an 80-column terminal (a path with no space may not; none is printed here)
    table = out.split("1. The tools the server offers")[1].split("\n2. ")[0]
    entries = [e for e in table.split("\n  autology_")[1:]]
    assert entries and all(" ".join(e.split()).endswith((".", "!", "?")) for e in entries), entries  # whole sentences
    builder = load_builder()
    nodes, relations = len(builder.NODES), len(builder.RELATIONS)
    for expected in [
        "autology demo: a scripted MCP session over stdio",
        "1. The tools the server offers",
        "autology_unrelate",
        f"{nodes} nodes, {relations} relations",
        "Default transcoding profile: MP3 192 kbps CBR  [superseded]",
        "✓ decision ",
        "✓ Related: «Estimate Content-Length for live transcodes» —[affects]→ «Content-Length estimator»",
        "Fields changed: status",
        "✗ Invalid content: a decision must be written as an ADR; missing section(s): Alternatives, Consequences",
        "✗ Invalid tags: 'Scanner Rules'",
        "(unchanged)",
        "✓ Removed relation:",
        "✓ Deleted: Content-Length estimator",
        f"now {nodes + 1} nodes, {relations + 1} relations",  # one node and one relation kept
        "autology_search('why are passwords stored encrypted') -> grounded",
        "Subsonic token auth forces reversibly stored passwords",
        "autology_search('kubernetes autoscaling') -> no_evidence",
        "not searched: code_bm25 (no_index)",
    ]:
        flat = " ".join(out.split())  # lines wrapped at 80 columns read as one
        assert " ".join(expected.split()) in flat, f"missing from the demo output: {expected!r}\n\n{out}"
    assert "Traceback" not in out + result.stderr
    assert "CHANGED" not in out

    temp_dir = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("temp dir:"))
    assert not Path(temp_dir).exists(), "the demo leaves its temporary copy behind"
    after = sorted((p.relative_to(PROJECT), p.read_bytes()) for p in (PROJECT / ".autology" / "nodes").rglob("*.md"))
    assert after == before, "the demo modified examples/tonearm"
