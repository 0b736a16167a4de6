"""The real server as a subprocess over stdio (`python -m autology_mcp --root R serve`)."""

from __future__ import annotations

import sys

import pytest
from core_helpers import adr, assert_graph_index_matches_files, relations_in_files
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.slow


def server_params(root, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "autology_mcp", "--root", str(root), "serve", *extra])


async def test_a_session_over_stdio(root):
    async with Client(server_params(root)) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert tools[:7] == [
            "autology_capture", "autology_query", "autology_status", "autology_update",
            "autology_delete", "autology_relate", "autology_unrelate",
        ]  # fmt: skip
        decision = await client.call_tool(
            "autology_capture", {"title": "Use SQLite FTS5", "content": adr(), "type": "decision", "tags": ["search"]}
        )
        assert not decision.is_error
        d = decision.structured_content["id"]
        component = await client.call_tool(
            "autology_capture", {"title": "Search module", "content": "The search module ranks nodes.", "type": "component"}
        )
        c = component.structured_content["id"]
        related = await client.call_tool("autology_relate", {"source": d, "target": c, "type": "affects"})
        assert related.content[0].text == f"✓ Related: {d} —[affects]→ {c}"
        hits = (await client.call_tool("autology_query", {"query": "sqlite"})).structured_content["result"]
        assert [h["node"]["id"] for h in hits] == [d]
        status = (await client.call_tool("autology_status", {})).structured_content
        assert (status["totalNodes"], status["totalRelations"]) == (2, 1)
        updated = await client.call_tool("autology_update", {"id": c, "status": "needs_review"})
        assert updated.content[0].text == "✓ Updated: Search module (component)\nFields changed: status"
        bad = await client.call_tool("autology_update", {"id": "../../etc/passwd", "title": "x"})
        assert bad.is_error and "UUID v4" in bad.content[0].text
        deleted = await client.call_tool("autology_delete", {"id": c})
        assert deleted.content[0].text == "✓ Deleted: Search module (component)\nRelations removed: 1"
    assert (root / ".autology" / "nodes" / "decisions" / f"{d}.md").is_file()
    assert relations_in_files(root) == set()
    assert_graph_index_matches_files(root)


async def test_the_server_sees_a_file_written_by_hand_while_it_runs(root):
    """An outside edit (here: a new file) becomes visible to queries of a running server."""
    import anyio
    from core_helpers import write_node_file

    async with Client(server_params(root)) as client:
        assert (await client.call_tool("autology_status", {})).structured_content["totalNodes"] == 0
        node_id, _ = write_node_file(root, "convention", title="Always pin dependencies", body="Pin with hashes.")
        hits = []
        with anyio.fail_after(20):  # a deadline, not a measurement
            while not hits:
                result = await client.call_tool("autology_query", {"query": "pin dependencies"})
                hits = result.structured_content["result"]
                if not hits:
                    await anyio.sleep(0.05)
        assert hits[0]["node"]["id"] == node_id


async def test_a_server_started_in_a_git_work_tree_without_a_code_index_builds_one(tmp_path):
    """Nobody runs `autology index build`: the server builds the index in the background at start,
    and a search a moment later finds the code."""
    import subprocess

    import anyio

    project = tmp_path / "repo"
    (project / "src").mkdir(parents=True)
    (project / "src" / "backoff.py").write_text("def reconnect_with_backoff(attempts):\n    return [2**n for n in range(attempts)]\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    async with Client(server_params(project)) as client:
        paths: list[str] = []
        for _ in range(300):  # the first build of one file takes well under a second; allow 30
            answer = (await client.call_tool("autology_search", {"query": "reconnect backoff", "scope": ["code"]})).structured_content
            paths = [h["path"] for h in answer["hits"]]
            if paths:
                break
            await anyio.sleep(0.1)
    assert paths == ["src/backoff.py"]
    assert list((project / ".autology" / "cache" / "index").glob("*/manifest.json"))
