"""Two real server processes on one project, writing at the same time: nothing is lost."""

from __future__ import annotations

import sys

import anyio
import pytest
from core_helpers import node_files, relations_in_files, relations_in_graph_index
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from autology_mcp.doctor import diagnose
from autology_mcp.markdown import parse_node
from autology_mcp.service import Autology

pytestmark = pytest.mark.slow

CAPTURES_PER_PROCESS = 100


def server_params(root) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "autology_mcp", "--root", str(root), "serve"])


async def test_two_server_processes_interleaving_captures_and_relates_lose_nothing(root):
    acknowledged: dict[str, str] = {}  # id -> title, for every capture the server confirmed
    relations: set[tuple[str, str, str]] = set()  # every relate the server confirmed
    own: dict[str, list[str]] = {"p0": [], "p1": []}

    async def worker(name: str, other: str) -> None:
        async with Client(server_params(root)) as client:
            for i in range(CAPTURES_PER_PROCESS):
                title = f"{name} node {i}"
                result = await client.call_tool(
                    "autology_capture",
                    {"title": title, "content": f"Written by {name}, number {i}.", "type": "concept", "tags": [name]},
                )
                assert not result.is_error, result.content[0].text
                node_id = result.structured_content["id"]
                acknowledged[node_id] = title
                own[name].append(node_id)
                if i:  # to my previous node: the source file is mine
                    previous = own[name][i - 1]
                    result = await client.call_tool(
                        "autology_relate", {"source": node_id, "target": previous, "type": "derived_from"}
                    )
                    assert not result.is_error, result.content[0].text
                    relations.add((node_id, previous, "derived_from"))
                if own[other]:  # across processes: the other server's latest node links to mine
                    theirs = own[other][-1]
                    result = await client.call_tool(
                        "autology_relate", {"source": theirs, "target": node_id, "type": "relates_to"}
                    )
                    assert not result.is_error, result.content[0].text
                    relations.add((theirs, node_id, "relates_to"))
                if i % 10 == 0:
                    result = await client.call_tool("autology_query", {"query": name, "limit": 5})
                    assert not result.is_error

    with anyio.fail_after(240):
        async with anyio.create_task_group() as group:
            group.start_soon(worker, "p0", "p1")
            group.start_soon(worker, "p1", "p0")

    assert len(acknowledged) == 2 * CAPTURES_PER_PROCESS
    # every acknowledged capture is on disk
    files = node_files(root)
    on_disk = {parse_node(text).id: parse_node(text).title for text in files.values()}
    assert on_disk == acknowledged
    # every acknowledged relation is in the source node's file and in graph/index.json
    in_files = {(s, t, ty) for s, t, ty, _d, _c in relations_in_files(root)}
    assert in_files == relations
    assert {(s, t, ty) for s, t, ty, _d, _c in relations_in_graph_index(root)} == relations
    # ... and indexed
    service = Autology.open(root)
    try:
        status = service.status()
        assert status.totalNodes == 2 * CAPTURES_PER_PROCESS
        assert status.totalRelations == len(relations)
        assert len(service.query(tags=["p0"], limit=100)) == CAPTURES_PER_PROCESS
        for node_id in list(acknowledged)[::17]:
            assert service.get(node_id).title == acknowledged[node_id]
        report = diagnose(service.store)
        assert report.ok, report.problems
        assert (report.nodes, report.relations) == (2 * CAPTURES_PER_PROCESS, len(relations))
    finally:
        service.close()
