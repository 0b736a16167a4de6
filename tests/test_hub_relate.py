"""One more relation from a hub (issue 17): spliced into the text, the index's JSON and the graph
index's lines (store.add_relation), and still exactly what the full way writes. Issue 29: relating
to a hub, and restating or changing a relation a hub has, touch none of its other relations either."""

from __future__ import annotations

import json

import pytest
from core_helpers import assert_graph_index_matches_files

from autology_mcp.common.errors import NotFoundError
from autology_mcp.knowledge import store as store_module
from autology_mcp.knowledge.markdown import parse_node, render_node
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.store import HUB_RELATIONS


@pytest.fixture
def hub_store(root):
    """A hub with HUB_RELATIONS relations (the last one written the full way) and 40 more targets."""
    service = Autology.open(root)
    targets = [service.capture(f"Target {i}", f"target {i}", type="concept").id for i in range(HUB_RELATIONS + 40)]
    hub = service.capture("Hub", "the node everything relates to", type="component").id
    for target in targets[:HUB_RELATIONS]:
        service.relate(hub, target, "relates_to")
    yield service, hub, targets
    service.close()


def _hub_file(service, hub):
    return service.store.abs(service.store.index.node_path(hub))


def _fast(service, monkeypatch):
    """Count the relates done by splicing."""
    calls = []
    original = service.store.add_relation

    def spy(*args):
        done = original(*args)
        calls.append(done)
        return done

    monkeypatch.setattr(service.store, "add_relation", spy)
    return calls


def test_a_hubs_relate_is_spliced_and_equals_the_full_render(hub_store, monkeypatch):
    service, hub, targets = hub_store
    calls = _fast(service, monkeypatch)
    kinds = ["depends_on", "uses", "relates_to"]
    for i, target in enumerate(targets[HUB_RELATIONS:]):
        service.relate(hub, target, kinds[i % 3], description="why: [it] matters, \"quoted\" ü" if i % 5 == 0 else None,
                       confidence=0.6 if i % 4 == 0 else None)
    service.relate(hub, targets[0], "depends_on")  # a second type to a target already linked: no new link
    assert calls and all(calls)
    text = _hub_file(service, hub).read_text(encoding="utf-8")
    node = parse_node(text)
    assert len(node.relations) == len(targets) + 1
    assert text == render_node(node, service.store.index.titles_of([r.target for r in node.relations]))
    assert '"relations":null' in service.store.index.node_data(hub)  # a hub's relations: in their rows only
    assert service.store.index.get_node(hub) == node
    assert service.store.index.nodes_by_rowid([1])  # decoding a batch works with a hub among them or not
    assert [n for n in service.store.index.all_nodes() if n.id == hub] == [node]
    rows = {(r.source, r.target, r.type.value) for r in service.store.index.relations() if r.source == hub}
    assert rows == {(hub, r.target, r.type.value) for r in node.relations}
    service.store.flush_graph_index()
    assert_graph_index_matches_files(service.store.root)
    assert service.store.reconcile().changed == 0  # the index took the file as it is
    expected = service.store._relation_lines()
    service.store._line_sources = None  # rebuilt from the index: the same lines
    assert service.store._relation_lines() == expected


def test_a_hubs_relations_in_their_rows_keep_their_order(hub_store):
    """The index keeps a hub's relations in their rows only (its JSON says null); a node read back
    has them in the file's order, also after a full rewrite that reorders them."""
    service, hub, targets = hub_store
    node = service.store.get(hub)
    assert [r.target for r in node.relations] == targets[:HUB_RELATIONS]
    reordered = tuple(reversed(node.relations))
    service.store.modify(hub, lambda n: n.replace(relations=reordered))
    assert service.store.get(hub).relations == reordered
    assert parse_node(_hub_file(service, hub).read_text(encoding="utf-8")).relations == reordered
    service.store.modify(hub, lambda n: n.replace(relations=reordered[: HUB_RELATIONS - 1]))  # a leaf again
    assert json.loads(service.store.index.node_data(hub))["relations"][0]["target"] == targets[HUB_RELATIONS - 1]
    assert service.store.get(hub).relations == reordered[: HUB_RELATIONS - 1]


def _whole_node_work(service, monkeypatch):
    """What grows with a node's relations, per node id: its relations decoded from the index (JSON and
    relation rows), its file rendered, its index rows rewritten (upsert_node deletes and inserts them all)."""
    seen = {"decoded": [], "rendered": [], "upserted": []}
    index = service.store.index
    decoded, upsert = index._decoded, index.upsert_node

    def spy_decoded(datas):
        nodes = decoded(datas)
        seen["decoded"] += [n.id for n in nodes]
        return nodes

    def spy_upsert(conn, node, path):
        seen["upserted"].append(node.id)
        return upsert(conn, node, path)

    def spy_render(node, titles=None):
        seen["rendered"].append(node.id)
        return render_node(node, titles)

    monkeypatch.setattr(index, "_decoded", spy_decoded)
    monkeypatch.setattr(index, "upsert_node", spy_upsert)
    monkeypatch.setattr(store_module, "render_node", spy_render)
    return seen


def _same_as_the_full_way(service, hub):
    """The hub's file is what a full render of it gives; the index, the graph lines and a reconcile agree."""
    text = _hub_file(service, hub).read_text(encoding="utf-8")
    node = parse_node(text)
    assert text == render_node(node, service.store.index.titles_of([r.target for r in node.relations]))
    assert service.store.index.get_node(hub) == node
    rows = {(r.target, r.type.value, r.description, r.confidence) for r in service.store.index.relations()
            if r.source == hub}
    assert rows == {(r.target, r.type.value, r.description, r.confidence) for r in node.relations}
    expected = service.store._relation_lines()
    service.store._line_sources = None  # rebuilt from the index: the same lines
    assert service.store._relation_lines() == expected
    service.store.flush_graph_index()
    assert_graph_index_matches_files(service.store.root)
    assert service.store.reconcile().changed == 0
    return node


def test_relating_to_a_hub_decodes_none_of_its_relations(hub_store, monkeypatch):
    """Issue 29: the target's existence check read the whole hub back (its 10,000 relation rows
    decoded: 86 ms at 10,000 relations, for a leaf relating to it)."""
    service, hub, targets = hub_store
    other = service.capture("Other hub", "a second hub", type="component").id
    for target in targets[:HUB_RELATIONS]:
        service.relate(other, target, "uses")
    seen = _whole_node_work(service, monkeypatch)
    calls = _fast(service, monkeypatch)
    service.relate(targets[-1], hub, "depends_on")  # a leaf to the hub: the leaf goes the full way
    service.relate(other, hub, "depends_on")  # a hub to a hub: spliced
    assert calls == [False, True]
    assert hub not in seen["decoded"] + seen["rendered"] + seen["upserted"]
    assert other not in seen["decoded"] + seen["rendered"] + seen["upserted"]
    assert [r.target for r in service.get(targets[-1]).relations] == [hub]
    assert service.get(other).relations[-1].target == hub
    with pytest.raises(NotFoundError):
        service.relate(targets[-1], "11111111-1111-4111-8111-111111111111", "uses")


def test_restating_or_changing_a_hubs_relation_is_spliced(hub_store, monkeypatch):
    """Issue 29: a relate the hub already has (the same again, or a new description or confidence)
    went the full way: every relation decoded, rendered and its rows rewritten (203 ms at 5,000).
    Now the item is replaced in the text, one row updated, one graph line replaced."""
    service, hub, targets = hub_store
    for i, target in enumerate(targets[HUB_RELATIONS : HUB_RELATIONS + 6]):  # spliced items of all shapes
        service.relate(hub, target, "uses", description="first\nsecond: [x]" if i % 2 else None,
                       confidence=0.7 if i % 3 else None)
    path = _hub_file(service, hub)
    seen = _whole_node_work(service, monkeypatch)
    calls = _fast(service, monkeypatch)

    written = path.stat()
    service.relate(hub, targets[0], "relates_to")  # the same again: nothing to write
    assert calls == [True]
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == (written.st_mtime_ns, written.st_ino)

    last, first = targets[HUB_RELATIONS + 5], targets[0]
    service.relate(hub, first, "relates_to", description="why: [it] matters, \"quoted\" ü")
    service.relate(hub, first, "relates_to", confidence=0.6)  # the description kept
    service.relate(hub, last, "uses", description="two\nlines")  # the last item, before references
    service.relate(hub, targets[HUB_RELATIONS + 1], "uses", description="")  # an empty one is none
    service.relate(hub, targets[HUB_RELATIONS + 2], "uses", confidence=0.8)
    service.relate(hub, targets[HUB_RELATIONS + 6], "uses")  # then one more, at the right place
    assert calls == [True] * 7
    assert seen == {"decoded": [], "rendered": [], "upserted": []}

    node = _same_as_the_full_way(service, hub)
    by_key = {(r.target, r.type.value): r for r in node.relations}
    assert (by_key[first, "relates_to"].description, by_key[first, "relates_to"].confidence) == (
        "why: [it] matters, \"quoted\" ü", 0.6)
    assert by_key[last, "uses"].description == "two lines"  # a description is one line
    assert by_key[targets[HUB_RELATIONS + 1], "uses"].description is None
    assert by_key[targets[HUB_RELATIONS + 2], "uses"].confidence == 0.8
    assert [r.target for r in node.relations][: HUB_RELATIONS] == targets[:HUB_RELATIONS]  # order kept
    assert node.relations[-1].target == targets[HUB_RELATIONS + 6]


def test_a_hand_edit_goes_the_full_way(hub_store, monkeypatch):
    service, hub, targets = hub_store
    calls = _fast(service, monkeypatch)
    service.relate(hub, targets[0], "relates_to", description="now described")  # exists: an update in place
    assert calls == [True]
    node = service.get(hub)
    assert [r.description for r in node.relations if r.target == targets[0]] == ["now described"]
    service.relate(hub, targets[HUB_RELATIONS], "relates_to")
    assert calls == [True, True]
    path = _hub_file(service, hub)
    path.write_text(path.read_text(encoding="utf-8").replace("the node everything relates to", "edited by hand"),
                    encoding="utf-8")
    service.relate(hub, targets[HUB_RELATIONS + 1], "relates_to")
    assert calls == [True, True, False]
    node = service.get(hub)
    assert node.content == "edited by hand" and len(node.relations) == HUB_RELATIONS + 2
    service.store.flush_graph_index()
    assert_graph_index_matches_files(service.store.root)


def test_a_leaf_goes_the_full_way_and_a_fresh_process_splices(hub_store, root, monkeypatch):
    """Issue 29: a process that did not write the hub's file itself (a server started since, the
    command line, a second server) went the full way (300 ms of CPU at 10,000 relations). The file is
    spliced as it is on disk when the index says the store wrote it and it is unchanged since."""
    service, hub, targets = hub_store
    calls = _fast(service, monkeypatch)
    service.relate(targets[1], targets[2], "relates_to")  # a leaf
    assert calls == [False]
    service.close()
    again = Autology.open(root)  # nothing kept in memory from the other process
    try:
        seen = _whole_node_work(again, monkeypatch)
        calls = _fast(again, monkeypatch)
        again.relate(hub, targets[-1], "uses")
        again.relate(hub, targets[-2], "uses")
        again.relate(hub, targets[0], "relates_to", description="restated")
        assert calls == [True, True, True]
        assert hub not in seen["decoded"] + seen["rendered"] + seen["upserted"]
        node = _same_as_the_full_way(again, hub)
        assert node.relations[-1].target == targets[-2]
        assert [r.target for r in node.relations][: HUB_RELATIONS] == targets[:HUB_RELATIONS]
        assert json.loads(again.store.index.node_data(hub))["relations"] is None
    finally:
        again.close()


def test_two_processes_relating_from_one_hub_splice_in_turn(hub_store, root, monkeypatch):
    """Two servers on one project (decision 181be226): each splices into what the other wrote."""
    service, hub, targets = hub_store
    other = Autology.open(root)
    try:
        seen = [_whole_node_work(s, monkeypatch) for s in (service, other)]
        calls = [_fast(s, monkeypatch) for s in (service, other)]
        for i, target in enumerate(targets[HUB_RELATIONS : HUB_RELATIONS + 6]):
            (service, other)[i % 2].relate(hub, target, "depends_on")
        other.relate(hub, targets[HUB_RELATIONS], "depends_on", confidence=0.6)
        service.relate(hub, targets[HUB_RELATIONS + 1], "depends_on", description="from the first")
        assert calls == [[True] * 4, [True] * 4]
        assert all(hub not in s["decoded"] + s["rendered"] + s["upserted"] for s in seen)
        other.store.flush_graph_index()
        node = _same_as_the_full_way(service, hub)
        assert other.store.index.get_node(hub) == node
        assert [r.target for r in node.relations][HUB_RELATIONS:] == targets[HUB_RELATIONS : HUB_RELATIONS + 6]
    finally:
        other.close()


def test_a_file_the_store_did_not_write_goes_the_full_way_once(hub_store, monkeypatch):
    """A file the index took from disk (a rebuild, a pull, a hand edit) may be shaped otherwise: the
    full way renders it once, then it is spliced."""
    service, hub, targets = hub_store
    service.store.rebuild()
    calls = _fast(service, monkeypatch)
    service.relate(hub, targets[-1], "uses")
    service.relate(hub, targets[-2], "uses")
    assert calls == [False, True]
    _same_as_the_full_way(service, hub)
