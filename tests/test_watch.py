"""The watcher (autology_mcp.knowledge.watch.NodeWatcher): outside changes become visible to queries.

Each test polls with a deadline instead of sleeping a fixed time.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable

import pytest
from core_helpers import relations_in_graph_index, write_node_file

from autology_mcp.common.errors import NotFoundError
from autology_mcp.knowledge.watch import NodeWatcher

DEADLINE = 15.0


def eventually(condition: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"not seen within {DEADLINE} s: {what}")


@pytest.fixture
def watcher(autology):
    w = NodeWatcher(autology.store)
    w.start()
    yield w
    w.stop()


def found(autology, query):
    return [h.node.id for h in autology.query(query)]


def test_a_new_file_becomes_visible(autology, root, watcher):
    node_id, _ = write_node_file(root, "pattern", title="Circuit breaker", body="Trip after five failures.")
    eventually(lambda: found(autology, "circuit breaker") == [node_id], "the new file in query results")


def test_an_edit_becomes_visible(autology, root, watcher, capture):
    node_id = capture("Rate limits", "Ten requests per second.")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    path.write_text(path.read_text().replace("Ten requests per second.", "Fifty requests per minute, burstable."))
    eventually(lambda: found(autology, "burstable") == [node_id], "the edited content in query results")
    assert found(autology, "second") == []


def test_a_deletion_becomes_visible(autology, root, watcher, capture):
    node_id = capture("Ephemeral", "short lived words")
    (root / ".autology" / "nodes" / "concepts" / f"{node_id}.md").unlink()
    eventually(lambda: found(autology, "ephemeral") == [], "the deleted node gone from query results")
    assert autology.store.index.get_node(node_id) is None
    with pytest.raises(NotFoundError):
        autology.get(node_id)


def test_a_relation_edited_by_hand_reaches_the_graph_index(autology, root, watcher, capture):
    a, b = capture("A"), capture("B")
    path = root / ".autology" / "nodes" / "concepts" / f"{a}.md"
    path.write_text(path.read_text().replace("relations: []", f"relations:\n- type: uses\n  target: {b}"))
    expected = {(a, b, "uses", None, 0.8)}

    def in_index():
        try:
            return relations_in_graph_index(root) == expected
        except ValueError:  # caught mid-rename on some file systems
            return False

    eventually(in_index, "the hand-written relation in graph/index.json")
    assert autology.status().totalRelations == 1


def test_an_atomic_replace_like_an_editor_does(autology, root, watcher, capture):
    node_id = capture("Editor save", "before the save")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    tmp = path.with_name("editor-swap.tmp")
    tmp.write_text(path.read_text().replace("before the save", "after the atomic save"))
    os.replace(tmp, path)
    eventually(lambda: found(autology, "atomic") == [node_id], "content written by rename")


def test_a_folder_copied_in_is_picked_up(autology, root, watcher, tmp_path):
    staging = tmp_path / "staging" / "extra"
    node_id, _ = write_node_file(tmp_path / "staging-root", "issue", title="Imported issue", body="imported words")
    staging.parent.mkdir(parents=True)
    shutil.copytree(tmp_path / "staging-root" / ".autology" / "nodes" / "issues", staging)
    shutil.move(str(staging), root / ".autology" / "nodes" / "issues" / "imported")
    eventually(lambda: found(autology, "imported") == [node_id], "a node in a folder moved into nodes/")


def test_a_malformed_edit_is_reported_not_fatal(autology, root, watcher, capture):
    node_id = capture("Soon broken", "fine words")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    path.write_text("---\ntitle: [broken\n---\n")
    eventually(lambda: bool(autology.status().malformedFiles), "the malformed file reported")
    assert autology.status().malformedFiles[0]["path"].endswith(f"{node_id}.md")
    assert path.read_text() == "---\ntitle: [broken\n---\n"
    other, _ = write_node_file(root, "concept", title="Still watching", body="alive")
    eventually(lambda: found(autology, "alive") == [other], "the watcher still works after a bad file")


def test_own_writes_do_not_cause_rereads(autology, watcher, capture):
    node_id = capture("Quiet", "quiet words")
    autology.update(node_id, title="Quieter")
    # the watcher's events for our own atomic writes find the index already current
    path = autology.store.paths.node_file("concept", node_id)
    assert autology.store.sync_path(path) == "none"
    assert found(autology, "quieter") == [node_id]


def test_nodes_folder_removed_and_recreated_like_a_git_checkout(autology, root, watcher, tmp_path, capture):
    """Checking out a branch without .autology/nodes removes the folder; coming back recreates it."""
    kept = capture("Kept across checkouts", "kept words")
    nodes = root / ".autology" / "nodes"
    saved = tmp_path / "saved-nodes"
    shutil.copytree(nodes, saved)
    shutil.rmtree(nodes)
    eventually(lambda: autology.status().totalNodes == 0, "the nodes gone with their folder")
    time.sleep(0.3)  # the folder stays away a moment, as during work on the other branch (not a measurement)
    shutil.copytree(saved, nodes)
    eventually(lambda: found(autology, "kept") == [kept], "the nodes back with their folder")
    new_id, _ = write_node_file(root, "issue", title="Written after the checkout", body="fresh words")
    eventually(lambda: found(autology, "fresh") == [new_id], "a file written into the recreated folder")
