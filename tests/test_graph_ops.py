"""Graph operations on a real store: neighbours, path, impact, supersession chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from autology_mcp.common.errors import NotFoundError, ValidationError
from autology_mcp.knowledge import graph_ops
from autology_mcp.knowledge.service import Autology


@pytest.fixture
def kg(tmp_path: Path):
    """A small graph:

    api --uses--> cache --depends_on--> redis ;  decision --affects--> api ;  doc --relates_to--> api
    new_adr --supersedes--> mid_adr --supersedes--> old_adr ;  lonely (no relations)
    """
    service = Autology.open(tmp_path)
    ids = {}
    for name, type_ in [
        ("api", "component"),
        ("cache", "component"),
        ("redis", "component"),
        ("doc", "concept"),
        ("lonely", "concept"),
    ]:
        ids[name] = service.capture(f"The {name}", f"About {name}.", type=type_).id
    adr = "## Context\nc\n## Decision\nd\n## Alternatives\na\n## Consequences\nq"
    for name in ("decision", "old_adr", "mid_adr", "new_adr"):
        ids[name] = service.capture(f"Decision {name}", adr, type="decision").id
    service.relate(ids["api"], ids["cache"], "uses")
    service.relate(ids["cache"], ids["redis"], "depends_on")
    service.relate(ids["decision"], ids["api"], "affects")
    service.relate(ids["doc"], ids["api"], "relates_to")
    service.relate(ids["new_adr"], ids["mid_adr"], "supersedes")
    service.relate(ids["mid_adr"], ids["old_adr"], "supersedes")
    yield service, ids
    service.close()


def ids_of(items: list[dict]) -> list[str]:
    return [item["id"] for item in items]


def test_neighbours_depth_one_follows_both_directions(kg) -> None:
    service, ids = kg
    result = graph_ops.neighbours(service.store.graph(), ids["api"], 1)
    assert set(ids_of(result["neighbours"])) == {ids["cache"], ids["decision"], ids["doc"]}
    assert all(n["distance"] == 1 for n in result["neighbours"])
    assert {(r["source"], r["type"], r["target"]) for r in result["relations"]} == {
        (ids["api"], "uses", ids["cache"]),
        (ids["decision"], "affects", ids["api"]),
        (ids["doc"], "relates_to", ids["api"]),
    }


def test_neighbours_depth_two_and_type_filter(kg) -> None:
    service, ids = kg
    graph = service.store.graph()
    two = graph_ops.neighbours(graph, ids["api"], 2)
    assert {n["id"]: n["distance"] for n in two["neighbours"]}[ids["redis"]] == 2
    only_uses = graph_ops.neighbours(graph, ids["api"], 2, ["uses", "depends_on"])
    assert set(ids_of(only_uses["neighbours"])) == {ids["cache"], ids["redis"]}


def test_path_between_two_nodes(kg) -> None:
    service, ids = kg
    result = graph_ops.path(service.store.graph(), ids["doc"], ids["redis"])
    assert result["found"] and result["length"] == 3
    assert ids_of(result["nodes"]) == [ids["doc"], ids["api"], ids["cache"], ids["redis"]]
    assert [r["type"] for r in result["relations"]] == ["relates_to", "uses", "depends_on"]


def test_path_not_found(kg) -> None:
    service, ids = kg
    result = graph_ops.path(service.store.graph(), ids["lonely"], ids["api"])
    assert result["found"] is False and result["nodes"] == []
    filtered = graph_ops.path(service.store.graph(), ids["doc"], ids["redis"], ["uses"])
    assert filtered["found"] is False


def test_impact_is_transitive_and_directional(kg) -> None:
    service, ids = kg
    graph = service.store.graph()
    # redis changes: cache depends on it, api uses cache
    redis = graph_ops.impact(graph, ids["redis"])
    assert [(n["id"], n["distance"]) for n in redis["impacted"]] == [(ids["cache"], 1), (ids["api"], 2)]
    # a decision affects api, and through it everything that depends on api (nothing here)
    decision = graph_ops.impact(graph, ids["decision"])
    assert ids_of(decision["impacted"]) == [ids["api"]]
    assert decision["impacted"][0]["via"] == {"source": ids["decision"], "type": "affects", "target": ids["api"]}
    # api changing does not impact what it uses, nor a concept that merely relates to it
    assert graph_ops.impact(graph, ids["api"])["impacted"] == []


def test_supersession_chain_oldest_first(kg) -> None:
    service, ids = kg
    result = graph_ops.supersession_chain(service.store.graph(), ids["mid_adr"])
    assert ids_of(result["chain"]) == [ids["old_adr"], ids["mid_adr"], ids["new_adr"]]
    assert ids_of(result["current"]) == [ids["new_adr"]]
    alone = graph_ops.supersession_chain(service.store.graph(), ids["lonely"])
    assert ids_of(alone["chain"]) == [ids["lonely"]] and alone["relations"] == []


def test_run_dispatches_and_validates(kg) -> None:
    service, ids = kg
    graph = service.store.graph()
    assert graph_ops.run(graph, "neighbors", ids["api"])["depth"] == 1
    assert graph_ops.run(graph, "path", ids["doc"], target=ids["api"])["length"] == 1
    with pytest.raises(ValidationError, match="operation"):
        graph_ops.run(graph, "walk", ids["api"])
    with pytest.raises(ValidationError, match="target"):
        graph_ops.run(graph, "path", ids["api"])
    with pytest.raises(ValidationError, match="depth"):
        graph_ops.neighbours(graph, ids["api"], 0)
    with pytest.raises(ValidationError, match="relation"):
        graph_ops.neighbours(graph, ids["api"], 1, ["knows"])
    with pytest.raises(NotFoundError):
        graph_ops.neighbours(graph, "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", 1)
    with pytest.raises(ValidationError, match="UUID"):
        graph_ops.impact(graph, "not-an-id")


async def test_autology_graph_tool_over_mcp(kg) -> None:
    from mcp import Client

    from autology_mcp.server.app import build_server

    service, ids = kg
    async with Client(build_server(service)) as client:
        result = await client.call_tool("autology_graph", {"operation": "impact", "id": ids["redis"]})
        assert not result.is_error
        assert [n["id"] for n in result.structured_content["impacted"]] == [ids["cache"], ids["api"]]
        path = await client.call_tool(
            "autology_graph",
            {"operation": "path", "id": ids["doc"], "target": ids["cache"], "relation_types": ["relates_to", "uses"]},
        )
        assert path.structured_content["length"] == 2
        bad = await client.call_tool("autology_graph", {"operation": "neighbours", "id": ids["api"], "depth": 99})
        assert bad.is_error and "depth" in bad.content[0].text


def test_cli_twins(kg) -> None:
    import json
    import subprocess
    import sys

    service, ids = kg
    root = str(service.store.root)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "autology_mcp", "--root", root, *args], capture_output=True, text=True
        )

    text = cli("graph", "neighbours", ids["api"], "--depth", "2", "--type", "uses", "--type", "depends_on")
    assert (
        text.returncode == 0
        and "The cache" in text.stdout
        and "The redis" in text.stdout
        and "The doc" not in text.stdout
    )
    impact = json.loads(cli("graph", "impact", ids["redis"], "--json").stdout)
    assert [n["id"] for n in impact["impacted"]] == [ids["cache"], ids["api"]]
    path = cli("graph", "path", ids["doc"], ids["redis"])
    assert path.returncode == 0 and path.stdout.count("—[") == 3
    chain = cli("graph", "supersession", ids["new_adr"])
    assert chain.stdout.index("Decision old_adr") < chain.stdout.index("Decision new_adr")
    report = json.loads(cli("analyze", "structure", "--json").stdout)
    assert [f["id"] for f in report["categories"]["structure"]["findings"]] == [ids["lonely"]]
    bad = cli("graph", "neighbours", "not-an-id")
    assert bad.returncode == 1 and "Node not found" in bad.stderr  # neither an id, a prefix nor a title
