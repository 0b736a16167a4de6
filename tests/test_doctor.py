"""`autology doctor`: malformed files, duplicate ids, dangling relation targets, misplaced files, a graph
index out of sync; it reports and never changes a node file."""

from __future__ import annotations

import json

import pytest
from core_helpers import assert_graph_index_matches_files, node_files, write_node_file

from autology_mcp.cli.main import main
from autology_mcp.knowledge.doctor import diagnose, render
from autology_mcp.knowledge.models import new_id
from autology_mcp.knowledge.store import NodeStore


def kinds(report):
    return [(p.kind, p.path) for p in report.problems]


@pytest.fixture
def doctor(root):
    stores = []

    def run():
        store = NodeStore(root)
        stores.append(store)
        before = node_files(root)
        report = diagnose(store)
        assert node_files(root) == before  # doctor never changes a node file
        return report

    yield run
    for store in stores:
        store.close()


def test_a_clean_store(autology, root, capture, doctor):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses")
    report = doctor()
    assert report.ok
    assert (report.nodes, report.relations) == (2, 1)
    assert report.to_dict() == {"ok": True, "nodes": 2, "relations": 1, "problems": []}
    assert "✓ no problems found" in render(report, root)


def test_malformed_file(autology, root, doctor):
    (root / ".autology" / "nodes" / "concepts" / "bad.md").write_text("no frontmatter\n")
    report = doctor()
    assert kinds(report) == [("malformed", ".autology/nodes/concepts/bad.md")]
    assert "no YAML frontmatter" in report.problems[0].message
    assert "✗ [malformed] .autology/nodes/concepts/bad.md: no YAML frontmatter" in render(report, root)


def test_dangling_relation_target(autology, root, capture, doctor):
    ghost = new_id()
    node_id, path = write_node_file(
        root, "concept", title="Points nowhere", extra_frontmatter=f"relations:\n- type: uses\n  target: {ghost}\n"
    )
    autology.store.reconcile()  # index.json now has the relation: only the dangling target is wrong
    report = doctor()
    assert kinds(report) == [("dangling_relation", path.relative_to(root).as_posix())]
    assert ghost in report.problems[0].message and node_id in report.problems[0].message


def test_dangling_after_a_target_file_is_removed_by_hand(autology, root, capture, doctor):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses")
    (root / ".autology" / "nodes" / "concepts" / f"{b}.md").unlink()
    report = doctor()
    assert [p.kind for p in report.problems] == ["dangling_relation"]


def test_duplicate_ids(autology, root, capture, doctor):
    node_id = capture("Original")
    original = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    (root / ".autology" / "nodes" / "concepts" / "copy.md").write_text(original.read_text())
    report = doctor()
    assert kinds(report) == [("duplicate_id", ".autology/nodes/concepts/copy.md")]
    assert node_id in report.problems[0].message


def test_misplaced_file(autology, root, doctor):
    node_id, path = write_node_file(root, "concept", title="In the wrong folder")
    wrong = root / ".autology" / "nodes" / "patterns" / path.name
    path.rename(wrong)
    report = doctor()
    assert kinds(report) == [("misplaced", wrong.relative_to(root).as_posix())]
    assert f".autology/nodes/concepts/{node_id}.md" in report.problems[0].message


def test_a_missing_graph_index_is_not_a_problem(autology, root, capture, doctor):
    """graph/ is gitignored: a fresh clone has no index.json, and doctor just writes it."""
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses")
    (root / ".autology" / "graph" / "index.json").unlink()
    assert doctor().ok
    assert_graph_index_matches_files(root)


def test_graph_index_edited_by_hand_is_rewritten_and_said_not_failed(autology, root, capture, doctor):
    """graph/index.json is derived: behind the files after a merge, a checkout or a hand edit, it is
    rewritten and said in a note, and doctor does not fail for it (issue 29)."""
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses")
    (root / ".autology" / "graph" / "index.json").write_text('{"version": "1.0", "relations": []}')
    report = doctor()
    assert report.ok and kinds(report) == []
    assert any("index.json was behind" in note and "rewritten" in note for note in report.notes)
    assert_graph_index_matches_files(root)  # and it has been rewritten
    assert doctor().ok and not doctor().notes


def test_graph_index_out_of_sync_with_a_relation_added_by_hand(autology, root, capture, doctor):
    """The node files are the truth: index.json is compared with them, not with the cache."""
    a, b = capture("A"), capture("B")
    path = root / ".autology" / "nodes" / "concepts" / f"{a}.md"
    path.write_text(path.read_text().replace("relations: []", f"relations:\n- type: uses\n  target: {b}"))
    report = doctor()
    assert report.ok and any("index.json was behind" in note for note in report.notes)
    assert_graph_index_matches_files(root)
    assert doctor().ok


def test_several_problems_at_once_and_the_cli_exit_code(autology, root, capture, capsys):
    capture("Fine")
    (root / ".autology" / "nodes" / "issues" / "broken.md").write_text("---\nid: [x\n---\n")
    write_node_file(root, "concept", extra_frontmatter=f"relations:\n- type: affects\n  target: {new_id()}\n")
    assert main(["--root", str(root), "doctor", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    # the hand-written relation is not in graph/index.json yet either: rewritten, and said as a note
    assert sorted(p["kind"] for p in data["problems"]) == ["dangling_relation", "malformed"]
    assert any("index.json was behind" in note for note in data["notes"])
    malformed = next(p for p in data["problems"] if p["kind"] == "malformed")
    assert malformed["path"] == ".autology/nodes/issues/broken.md" and "invalid YAML" in malformed["message"]
    assert main(["--root", str(root), "doctor"]) == 1
    out = capsys.readouterr().out
    assert "✗ [dangling_relation]" in out and "✗ [malformed] .autology/nodes/issues/broken.md" in out
