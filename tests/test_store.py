"""The node store: files are the truth; the SQLite index and graph/index.json follow them.

Covers reconcile of outside changes (files added, edited, deleted, moved by hand), malformed files
(skipped, reported by path and reason, never rewritten), duplicate ids, unknown frontmatter keys,
and rebuilding every derived index (cache dir deleted, corrupt DB, corrupt/missing index.json).
"""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest
from core_helpers import (
    assert_graph_index_matches_files,
    node_files,
    relations_in_files,
    relations_in_graph_index,
    snapshot,
    write_node_file,
)

from autology_mcp.common.errors import NotFoundError, StorageError
from autology_mcp.knowledge.models import new_id
from autology_mcp.knowledge.node_index import SCHEMA_VERSION
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.store import NodeStore


def reopen(root) -> Autology:
    return Autology.open(root)


def test_open_creates_the_layout(root):
    service = Autology.open(root)
    try:
        base = root / ".autology"
        for folder in ("decisions", "components", "conventions", "concepts", "patterns", "issues", "sessions"):
            assert (base / "nodes" / folder).is_dir()
        assert (base / "graph" / "index.json").is_file()
        assert "cache/" in (base / ".gitignore").read_text()
        assert relations_in_graph_index(root) == set()
    finally:
        service.close()


def test_capture_writes_the_file_at_the_spec_path(autology, root):
    result = autology.capture("Auth service", "Handles login.", type="component", tags=["auth"])
    path = root / ".autology" / "nodes" / "components" / f"{result.id}.md"
    assert path.is_file()
    text = path.read_text()
    assert f"id: {result.id}\n" in text and "# Auth service\n\nHandles login.\n" in text
    assert not list(path.parent.glob(".*.tmp"))  # no temp files left behind


# ------------------------------------------------------------------------------ reconcile


def test_file_added_by_hand_is_picked_up(autology, root):
    node_id, _ = write_node_file(root, "pattern", title="Retry with backoff", body="Retry idempotent calls.")
    report = autology.store.reconcile()
    assert report.added == 1
    assert autology.get(node_id).title == "Retry with backoff"
    assert [h.node.id for h in autology.query("backoff")] == [node_id]


def test_file_edited_by_hand_is_picked_up(autology, root, capture):
    node_id = capture("Old title", "old words")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    path.write_text(path.read_text().replace("old words", "brand new words").replace("Old title", "New title"))
    os.utime(path, ns=(1, 1_000_000_000))  # a different mtime even on coarse clocks
    report = autology.store.reconcile()
    assert report.updated == 1
    assert autology.get(node_id).title == "New title"
    assert autology.get(node_id).content == "brand new words"
    assert [h.node.id for h in autology.query("brand")] == [node_id]
    assert autology.query("old") == []


def test_file_deleted_by_hand_is_dropped(autology, root, capture):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "relates_to")
    (root / ".autology" / "nodes" / "concepts" / f"{a}.md").unlink()
    report = autology.store.reconcile()
    assert report.removed == 1
    with pytest.raises(NotFoundError):
        autology.get(a)
    assert autology.status().totalNodes == 1
    assert relations_in_graph_index(root) == set()  # the deleted file's relation is gone from index.json


def test_a_stale_index_is_reconciled_on_get(autology, root):
    """A file written by hand is found by id even before any reconcile."""
    node_id, _ = write_node_file(root, "issue", title="Flaky test")
    assert autology.get(node_id).title == "Flaky test"


def test_relation_added_by_hand_reaches_the_graph_index(autology, root, capture):
    a, b = capture("A"), capture("B")
    path = root / ".autology" / "nodes" / "concepts" / f"{a}.md"
    path.write_text(
        path.read_text().replace("relations: []", f"relations:\n- type: uses\n  target: {b}\n  confidence: 0.6")
    )
    autology.store.reconcile()
    assert relations_in_graph_index(root) == {(a, b, "uses", None, 0.6)}
    assert_graph_index_matches_files(root)


def test_file_moved_to_another_folder_keeps_the_node(autology, root, capture):
    node_id = capture("Movable")
    src = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    dst = root / ".autology" / "nodes" / "patterns" / "renamed.md"
    shutil.move(src, dst)
    autology.store.reconcile()
    assert autology.get(node_id).title == "Movable"
    assert autology.store.index.node_path(node_id) == ".autology/nodes/patterns/renamed.md"


# ------------------------------------------------------------------------------ malformed files


def test_malformed_file_is_skipped_reported_and_never_rewritten(autology, root, capture):
    good = capture("Good")
    bad = root / ".autology" / "nodes" / "concepts" / "broken.md"
    bad.write_text("---\nid: [unclosed\n---\nbody\n")
    before = bad.read_bytes()
    report = autology.store.reconcile()
    assert report.malformed == [(".autology/nodes/concepts/broken.md", report.malformed[0][1])]
    assert "invalid YAML frontmatter" in report.malformed[0][1]
    status = autology.status()
    assert status.totalNodes == 1
    assert status.malformedFiles == [{"path": ".autology/nodes/concepts/broken.md", "reason": report.malformed[0][1]}]
    # writes, rebuilds and reopenings leave it alone
    autology.update(good, title="Still good")
    autology.store.rebuild()
    reopen(root).close()
    assert bad.read_bytes() == before


def test_malformed_file_named_by_id_is_refused_with_its_reason(autology, root):
    node_id = new_id()
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    path.write_text(f"---\nid: {node_id}\ntype: concept\ntitle: [x\nmodified: 2026-01-01T00:00:00Z\n---\nx\n")
    before = path.read_bytes()
    with pytest.raises(StorageError, match="malformed.*invalid YAML"):
        autology.update(node_id, title="fixed")
    with pytest.raises(StorageError, match="malformed"):
        autology.delete(node_id)
    assert path.read_bytes() == before


def test_a_node_file_broken_by_hand_disappears_then_comes_back_when_fixed(autology, root, capture):
    node_id = capture("Fragile", "fragile words")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    good_text = path.read_text()
    path.write_text(good_text.replace("type: concept", "type: [broken"))
    autology.store.reconcile()
    assert autology.query("fragile") == []
    assert autology.status().malformedFiles[0]["path"].endswith(f"{node_id}.md")
    path.write_text(good_text)
    os.utime(path, ns=(2, 2_000_000_000))
    autology.store.reconcile()
    assert [h.node.id for h in autology.query("fragile")] == [node_id]
    assert autology.status().malformedFiles == []


def test_non_utf8_file_is_reported(autology, root):
    path = root / ".autology" / "nodes" / "concepts" / "latin1.md"
    path.write_bytes("---\ntitle: caf\xe9\n---\n".encode("latin-1"))
    report = autology.store.reconcile()
    assert report.malformed and "not UTF-8" in report.malformed[0][1]


def test_hidden_and_non_markdown_files_are_ignored(autology, root):
    (root / ".autology" / "nodes" / "concepts" / ".draft.md").write_text("junk")
    (root / ".autology" / "nodes" / "concepts" / "notes.txt").write_text("junk")
    report = autology.store.reconcile()
    assert report.malformed == [] and report.scanned == 0


# ------------------------------------------------------------------------------ unknown keys, duplicates


def test_unknown_frontmatter_keys_survive_an_update(autology, root):
    node_id, path = write_node_file(
        root, "concept", title="Obsidian note", extra_frontmatter="aliases:\n- alias one\ncssclass: wide\nreviewed: 2026-01-05\n"
    )
    autology.store.reconcile()
    autology.update(node_id, title="Obsidian note, edited", tags=["obsidian"])
    text = path.read_text()
    assert "aliases:\n- Obsidian note, edited\n- alias one\n" in text  # the title first, then the person's own
    assert "cssclass: wide\n" in text
    assert "reviewed: 2026-01-05\n" in text
    assert "title: Obsidian note, edited\n" in text
    autology.relate(node_id, autology.capture("Other", "x", type="concept").id, "relates_to")
    assert "cssclass: wide\n" in path.read_text()


def test_the_same_id_in_two_files(autology, root, capture):
    node_id = capture("Original", "original words")
    original = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    copy = root / ".autology" / "nodes" / "patterns" / "copy.md"
    copy.write_text(original.read_text().replace("Original", "Copy"))
    copy_text = copy.read_text()
    report = autology.store.reconcile()
    assert report.malformed == [
        (".autology/nodes/patterns/copy.md", f"duplicate id {node_id}: the node is already defined in "
         f".autology/nodes/concepts/{node_id}.md")
    ]  # fmt: skip
    assert autology.get(node_id).title == "Original"
    assert autology.status().totalNodes == 1
    autology.update(node_id, tags=["still-original"])
    assert copy.read_text() == copy_text  # never rewritten


@pytest.mark.parametrize("how", ["by hand", "with autology delete"])
def test_when_one_of_two_duplicates_is_deleted_the_other_becomes_the_node(autology, root, capture, how):
    """Deleted through the tool, the copy used to stay reported as a duplicate of a file that was gone (issue 13)."""
    node_id = capture("Original", "original words")
    original = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    copy = root / ".autology" / "nodes" / "patterns" / "copy.md"
    copy.write_text(original.read_text().replace("Original", "Copy"))
    autology.store.reconcile()
    if how == "by hand":
        original.unlink()
    else:
        autology.delete(node_id)
        assert not original.exists()
        assert autology.status().malformedFiles == []  # before any reconcile
    report = autology.store.reconcile()
    assert report.malformed == []
    assert autology.get(node_id).title == "Copy"
    assert autology.store.index.node_path(node_id) == ".autology/nodes/patterns/copy.md"


# ------------------------------------------------------------------------------ derived indexes


def test_rebuild_after_deleting_the_cache_dir(root, capture, autology):
    a, b = capture("Alpha", "alpha words"), capture("Beta", "beta words")
    autology.relate(a, b, "uses", description="alpha uses beta")
    autology.close()
    shutil.rmtree(root / ".autology" / "cache")
    service = reopen(root)
    try:
        assert service.status().totalNodes == 2
        assert service.status().totalRelations == 1
        assert [h.node.id for h in service.query("alpha")] == [a]
        assert_graph_index_matches_files(root)
    finally:
        service.close()


def test_a_corrupt_cache_database_is_rebuilt(root, capture, autology):
    a = capture("Alpha", "alpha words")
    autology.close()
    db = root / ".autology" / "cache" / "nodes.sqlite"
    for suffix in ("-wal", "-shm"):
        (root / ".autology" / "cache" / f"nodes.sqlite{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    service = reopen(root)
    try:
        assert [h.node.id for h in service.query("alpha")] == [a]
        service.store.index.check()
    finally:
        service.close()


def test_a_cache_database_of_another_schema_version_is_replaced(root, capture, autology):
    a = capture("Alpha", "alpha words")
    autology.close()
    conn = sqlite3.connect(root / ".autology" / "cache" / "nodes.sqlite")
    conn.execute("UPDATE meta SET value = 'old' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    service = reopen(root)
    try:
        assert service.store.index.get_meta("schema_version") == SCHEMA_VERSION
        assert [h.node.id for h in service.query("alpha")] == [a]
    finally:
        service.close()


@pytest.mark.parametrize("damage", ["missing", "garbage", "wrong-version", "stale"])
def test_graph_index_is_rebuilt_when_missing_corrupt_or_stale(root, capture, autology, damage):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "depends_on")
    index = root / ".autology" / "graph" / "index.json"
    if damage == "missing":
        index.unlink()
    elif damage == "garbage":
        index.write_text("{ not json")
    elif damage == "wrong-version":
        index.write_text('{"version": "9", "relations": []}')
    else:
        index.write_text('{"version": "1.0", "lastUpdated": "2026-01-01T00:00:00Z", "relations": []}')
    report = autology.store.reconcile()
    assert report.graph_index_rewritten
    assert relations_in_graph_index(root) == {(a, b, "depends_on", None, 0.8)}


def test_rebuild_equals_the_incremental_index(autology, root, capture):
    ids = [capture(f"Node {i}", f"content {i} shared") for i in range(5)]
    autology.relate(ids[0], ids[1], "uses")
    autology.relate(ids[2], ids[1], "affects", description="d", confidence=0.7)
    before = ([h.node.id for h in autology.query("shared")], autology.status(), autology.store.index.relations())
    report = autology.store.rebuild()
    assert report.scanned == 5 and report.added == 5
    after = ([h.node.id for h in autology.query("shared")], autology.status(), autology.store.index.relations())
    assert before == after
    assert_graph_index_matches_files(root)


def test_graph_view(autology, capture):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses")
    graph = autology.store.graph()
    assert graph.has_edge(a, b, key="uses")
    assert graph.nodes[a]["title"] == "A"
    autology.relate(b, a, "derived_from")
    assert autology.store.graph().has_edge(b, a, key="derived_from")  # the cached view follows changes


def test_two_stores_on_one_root_see_each_other(root):
    first, second = NodeStore(root), NodeStore(root)
    first.init()
    try:
        one = Autology(first)
        two = Autology(second)
        node_id = one.capture("Shared", "shared words", type="concept").id
        assert two.get(node_id).title == "Shared"
        two.update(node_id, title="Changed by two")
        assert one.get(node_id).title == "Changed by two"
        assert len(node_files(root)) == 1
    finally:
        first.close()
        second.close()


# ------------------------------------------------------------------------------ outside edits meeting writes


def test_an_update_keeps_an_outside_edit_the_index_has_not_seen(autology, root, capture):
    node_id = capture("Title", "original body")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    path.write_text(path.read_text().replace("original body", "edited by hand, not yet reconciled"))
    autology.update(node_id, tags=["edited"])
    text = path.read_text()
    assert "edited by hand, not yet reconciled" in text and "- edited\n" in text
    assert autology.get(node_id).content == "edited by hand, not yet reconciled"


def test_delete_removes_an_incoming_relation_the_index_has_not_seen(autology, root, capture):
    a, b = capture("A"), capture("B")
    path = root / ".autology" / "nodes" / "concepts" / f"{a}.md"
    path.write_text(path.read_text().replace("relations: []", f"relations:\n- type: uses\n  target: {b}"))
    assert autology.delete(b).endswith("Relations removed: 1")
    assert b not in path.read_text()
    assert_graph_index_matches_files(root)


def test_a_hand_written_file_without_timestamps_takes_the_file_time(autology, root):
    node_id = new_id()
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    path.write_text(f"---\nid: {node_id}\ntype: concept\ntitle: Minimal note\n---\nJust a body.\n")
    os.utime(path, (1_767_225_600, 1_767_225_600))  # 2026-01-01T00:00:00Z
    report = autology.store.reconcile()
    assert report.malformed == []
    node = autology.get(node_id)
    assert node.modified == node.created == "2026-01-01T00:00:00Z"
    autology.update(node_id, status="needs_review")
    assert "modified: " in path.read_text()


def test_a_rebuild_in_one_process_keeps_the_others_in_step(root):
    """`autology rebuild` while a server runs: both must go on sharing one index."""
    first, second = Autology.open(root), Autology.open(root)
    try:
        before = first.capture("Before", "before words", type="concept").id
        first.store.rebuild()
        after = second.capture("After", "after words", type="concept").id
        assert [h.node.id for h in first.query("after")] == [after]
        later = first.capture("Later", "later words", type="concept").id
        assert [h.node.id for h in second.query("later")] == [later]
        assert [h.node.id for h in second.query("before")] == [before]
        assert first.status() == second.status()
        assert first.status().totalNodes == 3
    finally:
        first.close()
        second.close()


def test_of_two_files_with_one_id_the_one_at_the_node_path_wins_a_rebuild(autology, root, capture):
    node_id = capture("Original", "the original words")
    original = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    copy = root / ".autology" / "nodes" / "concepts" / "0-copy.md"  # sorts before the id
    copy.write_text(original.read_text().replace("the original words", "a stale copy"))
    copy_text = copy.read_text()
    autology.store.rebuild()
    assert autology.store.index.node_path(node_id) == original.relative_to(root).as_posix()
    assert autology.get(node_id).content == "the original words"
    autology.update(node_id, tags=["kept"])
    assert "the original words" in original.read_text() and "- kept\n" in original.read_text()
    assert copy.read_text() == copy_text  # the duplicate is never rewritten


def test_an_update_never_overwrites_another_file_at_the_node_path(autology, root, capture):
    node_id = capture("Moved", "moved words")
    own = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    moved = root / ".autology" / "nodes" / "concepts" / "moved.md"
    own.rename(moved)
    autology.store.reconcile()  # the node now lives in moved.md
    own.write_text(moved.read_text().replace("moved words", "someone else's words"))  # a duplicate appears
    autology.store.reconcile()
    before = snapshot(root)
    with pytest.raises(StorageError, match="another file already exists"):
        autology.update(node_id, title="Changed")
    assert snapshot(root) == before


# ------------------------------------------------------------------------------ no file can crash the store

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_yaml_values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=12),
        st.sampled_from(["concept", "decision", "active", "uses", "2026-01-01", "2026-01-01T00:00:00Z",
                         "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "../x", ""]),
    ),  # fmt: skip
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=3)),
    max_leaves=8,
)
_frontmatter = st.dictionaries(
    st.sampled_from(["id", "type", "title", "tags", "confidence", "created", "modified", "source", "status",
                     "relations", "references", "session", "aliases"]),
    _yaml_values,
)  # fmt: skip


_VALID_BASE = {
    "id": "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "type": "concept", "title": "Fuzzed", "modified": "2026-01-01T00:00:00Z",
}  # fmt: skip
_optional_fields = st.dictionaries(
    st.sampled_from(["tags", "confidence", "created", "source", "status", "relations", "references", "session", "x"]),
    st.one_of(
        _yaml_values,
        st.lists(st.fixed_dictionaries({"type": st.sampled_from(["uses", "bad"]), "target": _yaml_values}), max_size=2),
    ),
)


def _file_text(draw_value):
    import yaml

    kind, value = draw_value
    if kind == "raw":
        return value
    try:
        front = yaml.safe_dump(value, allow_unicode=True)
    except yaml.YAMLError:
        front = "{}\n"
    return f"---\n{front}---\nbody\n"


def test_two_long_tags_alike_in_their_first_64_characters_are_one_tag(root):
    """Found by the fuzz test below: tags are cut at 64 characters, and two cut alike were kept twice
    (the index refused the second row: the whole reconcile failed)."""
    store = NodeStore(root, durable=False)
    try:
        store.init()
        long = "x" * 70
        node_id, _ = write_node_file(root, extra_frontmatter=f"tags: [{long}a, {long}b, short]\n")
        assert store.reconcile().added == 1
        assert store.get(node_id).tags == ("x" * 64, "short")
    finally:
        store.close()


@settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "80")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    content=st.one_of(
        st.tuples(st.just("raw"), st.text(max_size=200)),
        st.tuples(st.just("raw"), st.text(max_size=100).map(lambda t: "---\n" + t + "\n---\n")),
        st.tuples(st.just("yaml"), _frontmatter),
        st.tuples(st.just("yaml"), _optional_fields.map(lambda d: {**_VALID_BASE, **d})),
    )
)
def test_no_file_content_crashes_the_store(tmp_path_factory, content):
    root = tmp_path_factory.mktemp("fuzz")
    store = NodeStore(root, durable=False)
    try:
        store.init()
        path = root / ".autology" / "nodes" / "concepts" / "fuzzed.md"
        path.write_text(_file_text(content), encoding="utf-8", errors="surrogatepass")
        before = path.read_bytes()
        report = store.reconcile()
        assert report.scanned == 1
        assert report.added + len(report.malformed) >= 1
        if report.malformed:
            assert report.malformed[0][0] == ".autology/nodes/concepts/fuzzed.md" and report.malformed[0][1]
        else:
            node_id = store.index.files()[".autology/nodes/concepts/fuzzed.md"].node_id
            assert store.get(node_id).id == node_id
        assert path.read_bytes() == before
        store.rebuild()
        assert path.read_bytes() == before
    finally:
        store.close()


def test_a_merge_conflict_in_a_node_file_is_reported_and_left_alone(autology, root, capture):
    node_id = capture("Merged", "merged words")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    text = path.read_text()
    conflicted = text.replace(
        "status: active\n", "<<<<<<< HEAD\nstatus: active\n=======\nstatus: superseded\n>>>>>>> branch\n"
    )
    path.write_text(conflicted)
    report = autology.store.reconcile()
    assert [p for p, _ in report.malformed] == [f".autology/nodes/concepts/{node_id}.md"]
    assert "unresolved git merge conflict at line 10" in report.malformed[0][1]  # says what it is, not only bad YAML
    assert autology.query("merged") == []
    with pytest.raises(StorageError, match="malformed"):
        autology.update(node_id, title="x")
    assert path.read_text() == conflicted


def test_after_a_rebuild_elsewhere_no_process_writes_relations_that_are_gone(root):
    first, second = Autology.open(root), Autology.open(root)
    try:
        a = first.capture("A", "a", type="concept").id
        b = first.capture("B", "b", type="concept").id
        first.relate(a, b, "uses")
        index = root / ".autology" / "graph" / "index.json"
        index.unlink()
        second.store.reconcile()  # the second process renders graph/index.json (a -> b)
        path = root / ".autology" / "nodes" / "concepts" / f"{a}.md"
        path.write_text(path.read_text().replace(f"relations:\n- type: uses\n  target: {b}\n  confidence: 0.8\n", "relations: []\n"))
        assert relations_in_files(root) == set()
        first.store.rebuild()
        assert_graph_index_matches_files(root)
        index.unlink()
        second.store.reconcile()  # must not write the relation it remembers
        assert_graph_index_matches_files(root)
    finally:
        first.close()
        second.close()


def test_the_graph_index_is_not_fsynced_and_a_lost_write_is_repaired(autology, root, capture, monkeypatch):
    """Issue 17: graph/index.json is derived, so it is written atomically but without fsync (the node
    file still is). If a crash loses that write, the stamp (size and mtime as written) no longer
    matches and the next start rewrites it: never a stamped but wrong index."""
    a, b = capture(), capture()
    synced = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        try:
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            synced.append("?")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    autology.relate(a, b, "uses")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert any(p.endswith(f"{a}.md") or f".{a}.md." in p for p in synced), synced  # the node file: durable
    assert not any("index.json" in p for p in synced), synced  # the derived graph index: not fsynced
    graph_index = root / ".autology" / "graph" / "index.json"
    assert f'"target": "{b}"' in graph_index.read_text(encoding="utf-8")
    autology.close()
    graph_index.write_text("")  # what a crash right after the rename can leave behind
    again = reopen(root)
    try:
        assert f'"target": "{b}"' in graph_index.read_text(encoding="utf-8")
    finally:
        again.close()


def test_a_delayed_graph_index_is_written_once_per_burst_and_at_close(root, capture, autology):
    """Issue 17: with ``graph_index_delay`` (the server's setting) a relate does not rewrite the
    whole graph/index.json; one rewrite follows the burst, and close() writes what is pending."""
    import time

    a, b, c = capture(), capture(), capture()
    graph_index = root / ".autology" / "graph" / "index.json"
    store = autology.store
    store.graph_index_delay = 0.2
    writes = []
    real = store._write_graph_index
    store._write_graph_index = lambda: (writes.append(1), real())[1]
    autology.relate(a, b, "uses")
    autology.relate(a, c, "uses")
    autology.relate(b, c, "depends_on")
    assert writes == [] and f'"target": "{c}"' not in graph_index.read_text(encoding="utf-8")
    deadline = time.monotonic() + 5
    while not writes and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.05)
    assert writes == [1]  # one rewrite for the three relates
    text = graph_index.read_text(encoding="utf-8")
    assert f'"source": "{b}", "target": "{c}", "type": "depends_on"' in text
    autology.unrelate(b, c, "depends_on")
    autology.close()  # the pending rewrite happens now, not lost
    assert f'"source": "{b}", "target": "{c}"' not in graph_index.read_text(encoding="utf-8")
    assert len(writes) == 2
