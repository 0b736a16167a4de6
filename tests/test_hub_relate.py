"""One more relation from a hub (issue 17): spliced into the text, the index's JSON and the graph
index's lines (store.add_relation), and still exactly what the full way writes."""

from __future__ import annotations

import json

import pytest
from core_helpers import assert_graph_index_matches_files

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

    def spy(source, relation):
        done = original(source, relation)
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


def test_changing_a_relation_or_a_hand_edit_goes_the_full_way(hub_store, monkeypatch):
    service, hub, targets = hub_store
    calls = _fast(service, monkeypatch)
    service.relate(hub, targets[0], "relates_to", description="now described")  # exists: an update in place
    assert calls == [False]
    node = service.get(hub)
    assert [r.description for r in node.relations if r.target == targets[0]] == ["now described"]
    service.relate(hub, targets[HUB_RELATIONS], "relates_to")
    assert calls == [False, True]
    path = _hub_file(service, hub)
    path.write_text(path.read_text(encoding="utf-8").replace("the node everything relates to", "edited by hand"),
                    encoding="utf-8")
    service.relate(hub, targets[HUB_RELATIONS + 1], "relates_to")
    assert calls == [False, True, False]
    node = service.get(hub)
    assert node.content == "edited by hand" and len(node.relations) == HUB_RELATIONS + 2
    service.store.flush_graph_index()
    assert_graph_index_matches_files(service.store.root)


def test_a_leaf_and_a_fresh_process_go_the_full_way(hub_store, root, monkeypatch):
    service, hub, targets = hub_store
    calls = _fast(service, monkeypatch)
    service.relate(targets[1], targets[2], "relates_to")  # a leaf
    assert calls == [False]
    service.close()
    again = Autology.open(root)  # nothing kept from the other process: the full way once, then spliced
    try:
        calls = _fast(again, monkeypatch)
        again.relate(hub, targets[-1], "uses")
        again.relate(hub, targets[-2], "uses")
        assert calls == [False, True]
        node = parse_node(_hub_file(again, hub).read_text(encoding="utf-8"))
        assert again.store.index.get_node(hub) == node and node.relations[-1].target == targets[-2]
        assert json.loads(again.store.index.node_data(hub))["relations"] is None
    finally:
        again.close()
