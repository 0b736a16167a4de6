"""`autology import basic-memory` (issue 14): basic-memory notes (front matter, observations,
relations) as nodes and relations; a target that is not among the notes is reported, not invented."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from autology_mcp.cli.main import main
from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.service import Autology

FIXTURES = Path(__file__).parent / "fixtures" / "basic_memory"


def run(capsys, root: Path, folder: Path, *args: str) -> dict:
    assert main(["--root", str(root), "import", "basic-memory", str(folder), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_notes_become_nodes_and_their_relations_relations(tmp_path: Path, capsys):
    root = tmp_path / "project"
    root.mkdir()
    notes = tmp_path / "notes"
    shutil.copytree(FIXTURES, notes)
    dry = run(capsys, root, notes)
    assert dry["counts"] == {"create": 3} and any("Stripe" in s for s in dry["skipped"])
    run(capsys, root, notes, "--apply")
    assert run(capsys, root, notes, "--apply")["counts"] == {"unchanged": 3}
    service = Autology.open(root)
    try:
        nodes = {n.title: n for n in service.store.index.all_nodes()}
        assert {t: n.type.value for t, n in nodes.items()} == {
            "Payments Service": "component", "Ledger": "component", "Ana Souza": "concept"}
        payments = nodes["Payments Service"]
        assert "[decision] Every charge carries an idempotency key" in payments.content
        assert "## Relations" not in payments.content and payments.tags == ("payments", "backend")
        titles = {r.target: (r.type.value, r.description) for r in payments.relations}
        assert {nodes[t].id: v for t, v in (("Ledger", ("depends_on", "depends_on")),
                                            ("Ana Souza", ("relates_to", "maintained_by")))}.items() <= titles.items()
        assert [(r.type.value, r.description) for r in nodes["Ledger"].relations] == [("relates_to", "used_by")]  # by permalink
        assert diagnose(service.store).ok
    finally:
        service.close()
