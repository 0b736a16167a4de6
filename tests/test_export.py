"""`autology graph export` in every format (the HTML page: tests/test_graph_html.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from autology_mcp.knowledge.export import FORMATS, export, graph_data
from autology_mcp.knowledge.service import Autology

ADR = "## Context\nc\n\n## Decision\nd\n\n## Alternatives\na\n\n## Consequences\nq"
NASTY = 'Quotes " and </script><script>document.body.setAttribute("data-error","injected")</script>'


@pytest.fixture
def service(tmp_path: Path):
    s = Autology.open(tmp_path)
    ids = {
        "old": s.capture("Use Redis for the cache", ADR, type="decision", tags=["cache"]).id,
        "new": s.capture("Use an in-process cache", ADR, type="decision", tags=["cache"]).id,
        "comp": s.capture("Pricing API", "Serves prices.", type="component", references=["src/pricing.py"]).id,
        "nasty": s.capture(NASTY[:100], "Text with <b>markup</b> & ampersands.", type="concept").id,
    }
    s.relate(ids["new"], ids["old"], "supersedes", description="cheaper to run")
    s.relate(ids["new"], ids["comp"], "affects")
    s.relate(ids["nasty"], ids["comp"], "relates_to")
    s.update(ids["old"], status="superseded")
    s.ids = ids  # type: ignore[attr-defined]
    yield s
    s.close()


def test_graph_data_is_complete_and_ordered(service: Autology) -> None:
    data = graph_data(service.store)
    assert [n["id"] for n in data["nodes"]] == sorted(service.ids.values())
    assert len(data["relations"]) == 3 and not any(r["dangling"] for r in data["relations"])
    assert export(service.store, "json") == export(service.store, "json")  # deterministic


def test_json(service: Autology) -> None:
    data = json.loads(export(service.store, "json"))
    statuses = {n["id"]: n["status"] for n in data["nodes"]}
    assert statuses[service.ids["old"]] == "superseded"
    rel = next(r for r in data["relations"] if r["type"] == "supersedes")
    assert (rel["source"], rel["target"], rel["description"]) == (
        service.ids["new"],
        service.ids["old"],
        "cheaper to run",
    )


def test_mermaid(service: Autology) -> None:
    text = export(service.store, "mermaid")
    assert text.startswith("graph LR\n")
    new, old = (f"n_{service.ids[k].replace('-', '_')}" for k in ("new", "old"))
    assert f"{new} -->|supersedes| {old}" in text
    assert "classDef decision" in text and f"class {old} superseded" in text
    assert '"' not in NASTY[:100].replace('"', "") or "#quot;" in text  # quotes escaped inside labels
    assert "</script>" not in text


def test_dot(service: Autology) -> None:
    text = export(service.store, "dot")
    assert text.startswith("digraph autology {") and text.rstrip().endswith("}")
    assert f'"{service.ids["new"]}" -> "{service.ids["old"]}" [label="supersedes"];' in text
    assert '\\"' in text  # the title's double quotes are escaped


def test_graphml_reads_back(service: Autology, tmp_path: Path) -> None:
    import networkx as nx

    path = tmp_path / "g.graphml"
    path.write_text(export(service.store, "graphml"))
    ET.parse(path)  # well-formed XML
    graph = nx.read_graphml(path)
    assert graph.number_of_nodes() == 4 and graph.number_of_edges() == 3
    assert graph.nodes[service.ids["comp"]]["type"] == "component"
    assert graph.edges[service.ids["new"], service.ids["old"]]["relation"] == "supersedes"


def test_dangling_relations_are_drawn_as_missing(tmp_path: Path) -> None:
    s = Autology.open(tmp_path)
    a = s.capture("Alpha", "a", type="concept").id
    ghost = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
    path = tmp_path / ".autology" / "nodes" / "concepts" / f"{a}.md"
    path.write_text(path.read_text().replace("relations: []", f"relations:\n- type: uses\n  target: {ghost}"))
    s.store.reconcile()
    assert json.loads(export(s.store, "json"))["relations"][0]["dangling"] is True
    assert "missing" in export(s.store, "mermaid") and f'"{ghost}" [label="missing"' in export(s.store, "dot")
    s.close()


def test_cli_export_writes_a_file(service: Autology, tmp_path: Path) -> None:
    out = tmp_path / "graph.mmd"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "autology_mcp",
            "--root",
            str(service.store.root),
            "graph",
            "export",
            "--format",
            "mermaid",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text() == export(service.store, "mermaid")
    bad = subprocess.run(
        [sys.executable, "-m", "autology_mcp", "graph", "export", "--format", "svg"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    assert set(FORMATS) == {"mermaid", "dot", "graphml", "json", "html"}
