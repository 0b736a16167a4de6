"""`autology import memory` (issue 14): the official MCP memory server's memory.jsonl as nodes and
relations, by stated rules; a dry run by default; a second run changes only what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autology_mcp.cli.main import main
from autology_mcp.knowledge.adr import missing_adr_sections
from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.importers.memory import node_type, relation_type
from autology_mcp.knowledge.service import Autology

LINES = [  # the server's own line shapes (entity, relation), keys in any order, one forked marker line
    {"type": "_aim", "source": "mcp-knowledge-graph"},
    {"type": "entity", "name": "Payments API", "entityType": "service", "observations": ["Charges cards", "Runs on port 8080"]},
    {"type": "entity", "name": "Stripe", "entityType": "external_system", "observations": ["Card processor"]},
    {"type": "entity", "name": "Use idempotency keys", "entityType": "decision", "observations": ["Every charge sends one"]},
    {"type": "entity", "name": "Retry budget", "entityType": "concept", "observations": []},
    {"type": "entity", "entityType": "coding_guideline", "observations": ["Money is integer cents"], "name": "money_in_cents"},
    {"type": "relation", "from": "Payments API", "to": "Stripe", "relationType": "calls"},
    {"type": "relation", "from": "Payments API", "to": "Use idempotency keys", "relationType": "implements"},
    {"type": "relation", "from": "Retry budget", "to": "Payments API", "relationType": "is part of"},
    {"type": "relation", "from": "Payments API", "to": "Nobody", "relationType": "uses"},
]


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in LINES) + "\nnot json\n")
    return path


def run(capsys, root: Path, path: Path, *args: str) -> dict:
    assert main(["--root", str(root), "import", "memory", str(path), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_rules_for_types():
    assert [node_type(t) for t in ("service", "decision", "coding_guideline", "known bug", "workflow", "person")] == [
        "component", "decision", "convention", "issue", "pattern", "concept"]
    assert [relation_type(t) for t in ("calls", "depends on", "implements", "replaces", "extends", "is part of",
                                       "used_by", "replaced_by")] == [
        "uses", "depends_on", "implements", "supersedes", "derived_from", "relates_to", "relates_to", "relates_to"]


def test_entities_and_relations_become_nodes_and_relations(tmp_path: Path, memory_file: Path, capsys):
    root = tmp_path / "project"
    root.mkdir()
    dry = run(capsys, root, memory_file)
    assert dry["counts"] == {"create": 5} and not list(root.rglob("*.md"))
    assert any("Nobody" in s for s in dry["skipped"]) and any("not JSON" in s for s in dry["skipped"])
    run(capsys, root, memory_file, "--apply")
    service = Autology.open(root)
    try:
        nodes = {n.title: n for n in service.store.index.all_nodes()}
        assert {t: n.type.value for t, n in nodes.items()} == {
            "Payments API": "component", "Stripe": "component", "Use idempotency keys": "decision",
            "Retry budget": "concept", "money_in_cents": "convention"}
        assert nodes["Payments API"].content == "- Charges cards\n- Runs on port 8080"
        assert missing_adr_sections(nodes["Use idempotency keys"].content) == []
        api = nodes["Payments API"]
        assert {(service.store.get(r.target).title, r.type.value) for r in api.relations} == {
            ("Stripe", "uses"), ("Use idempotency keys", "implements")}
        part_of = nodes["Retry budget"].relations[0]
        assert (part_of.type.value, part_of.description) == ("relates_to", "is part of")
        assert all(n.source == "import_memory" and n.tags for n in nodes.values())
        assert diagnose(service.store).ok
    finally:
        service.close()
    assert run(capsys, root, memory_file, "--apply")["counts"] == {"unchanged": 5}
    service = Autology.open(root)
    try:
        assert sum(len(n.relations) for n in service.store.index.all_nodes()) == 3  # not added twice
    finally:
        service.close()
