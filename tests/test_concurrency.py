"""Two real server processes on one project, writing at the same time: nothing is lost."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from core_helpers import node_files, relations_in_files, relations_in_graph_index
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.markdown import parse_node
from autology_mcp.knowledge.service import Autology

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


def test_threads_of_one_process_lose_nothing(autology, root):
    """The MCP SDK runs sync tools in worker threads: one Autology must take concurrent calls."""
    import threading

    errors: list[BaseException] = []
    made: dict[str, list[str]] = {}

    def worker(name: str) -> None:
        try:
            mine = made.setdefault(name, [])
            for i in range(25):
                mine.append(autology.capture(f"{name} {i}", f"thread {name} item {i}", type="concept").id)
                if i:
                    autology.relate(mine[-1], mine[-2], "derived_from")
                if i % 5 == 0:
                    autology.update(mine[0], content=f"updated by {name} at {i}")
                    autology.query(name)
                    autology.status()
            autology.unrelate(mine[1], mine[0], "derived_from")
            autology.delete(mine[-1])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    expected_nodes = {i for ids in made.values() for i in ids[:-1]}
    on_disk = {parse_node(text).id for text in node_files(root).values()}
    assert on_disk == expected_nodes
    expected_relations = {
        (ids[i], ids[i - 1], "derived_from") for ids in made.values() for i in range(2, len(ids) - 1)
    }
    assert {(s, t, ty) for s, t, ty, _d, _c in relations_in_files(root)} == expected_relations
    assert {(s, t, ty) for s, t, ty, _d, _c in relations_in_graph_index(root)} == expected_relations
    assert autology.status().totalNodes == len(expected_nodes)
    assert diagnose(autology.store).ok


async def test_concurrent_tool_calls_on_one_in_memory_server(connect, root):
    made: list[str] = []

    async def one(i: int) -> None:
        result = await client.call_tool(
            "autology_capture", {"title": f"Parallel {i}", "content": f"parallel call {i}", "type": "pattern"}
        )
        assert not result.is_error, result.content[0].text
        made.append(result.structured_content["id"])

    async with connect() as client:
        async with anyio.create_task_group() as group:
            for i in range(40):
                group.start_soon(one, i)
        async with anyio.create_task_group() as group:
            for source, target in zip(made, made[1:], strict=False):
                group.start_soon(client.call_tool, "autology_relate", {"source": source, "target": target, "type": "uses"})
        status = (await client.call_tool("autology_status", {})).structured_content
    assert status["totalNodes"] == 40 and status["totalRelations"] == 39
    assert len(relations_in_files(root)) == 39
    assert relations_in_graph_index(root) == relations_in_files(root)


WORKER = r'''
import json, random, sys
from autology_mcp.common.errors import NotFoundError
from autology_mcp.knowledge.service import Autology

root, name, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
autology = Autology.open(root)

def log(*event):
    print(json.dumps(event), flush=True)

for i in range(60):
    node_id = autology.capture(f"{name} {i}", f"race between {name} and the other, step {i}", type="concept").id
    log("captured", node_id)
    others = [h.node.id for h in autology.query(limit=30)]
    for target in rng.sample(others, min(2, len(others))):
        if target == node_id:
            continue
        try:
            autology.relate(node_id, target, "relates_to")
            log("related", node_id, target)
        except NotFoundError:
            pass  # the other process deleted it first
    if i % 4 == 3 and others:
        victim = rng.choice(others)
        try:
            autology.delete(victim)
            log("deleted", victim)
        except NotFoundError:
            pass
autology.close()
'''


def test_two_processes_racing_deletes_against_relates_leave_no_dangling_relation(root):
    import subprocess

    Autology.open(root).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), name, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, seed in (("left", 1), ("right", 2))
    ]
    events = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        events += [json.loads(line) for line in out.splitlines()]
    captured = {e[1] for e in events if e[0] == "captured"}
    deleted = {e[1] for e in events if e[0] == "deleted"}
    related = {(e[1], e[2]) for e in events if e[0] == "related"}
    assert len(captured) == 120 and deleted
    on_disk = {parse_node(text).id for text in node_files(root).values()}
    assert on_disk == captured - deleted
    in_files = {(s, t) for s, t, _ty, _d, _c in relations_in_files(root)}
    assert in_files == {(s, t) for s, t in related if s not in deleted and t not in deleted}
    assert relations_in_graph_index(root) == relations_in_files(root)
    service = Autology.open(root)
    try:
        report = diagnose(service.store)
        assert report.ok, report.problems
        assert service.status().totalNodes == len(on_disk)
    finally:
        service.close()
