"""The repository index tools through the MCP SDK's in-memory Client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from code_fixtures import git, write
from mcp import Client

from autology_mcp.knowledge.service import Autology
from autology_mcp.server.app import build_server


def client_for(root: Path) -> tuple[Client, Autology]:
    autology = Autology.open(root)
    return Client(build_server(autology)), autology


async def test_tools_are_listed(repo: Path):
    client, autology = client_for(repo)
    try:
        async with client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
    finally:
        autology.close()
    assert "autology_index" in tools and "autology_code_search" in tools
    assert tools["autology_code_search"].input_schema["required"] == ["query"]
    assert "ctx" not in tools["autology_index"].input_schema["properties"]
    assert tools["autology_code_search"].annotations.read_only_hint is True


async def test_build_with_progress_search_and_verify(repo: Path):
    client, autology = client_for(repo)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    try:
        async with client:
            status = await client.call_tool("autology_index", {"action": "status"})
            assert not status.is_error and status.structured_content["exists"] is False
            built = await client.call_tool("autology_index", {"action": "build"}, progress_callback=on_progress)
            assert not built.is_error, built.content[0].text
            summary = built.structured_content
            assert summary["mode"] == "full" and summary["rebuilt"] == 9 and summary["files"] == 7
            assert progress and progress[-1][0] == progress[-1][1] == 9

            found = await client.call_tool("autology_code_search",
                                           {"query": "where do we reconnect the websocket after a timeout?", "top": 3})
            assert not found.is_error
            hits = found.structured_content["hits"]
            assert hits[0]["path"] == "src/app/websocket.py" and hits[0]["location"].startswith("src/app/websocket.py:")
            assert set(hits[0]["scores"]) >= {"bm25", "symbol", "path", "vector"}

            # an edit is picked up by the next search without an explicit build
            write(repo, "src/app/billing.py", "def issue_credit_note(invoice):\n    return invoice\n")
            found = await client.call_tool("autology_code_search", {"query": "credit note"})
            data = found.structured_content
            assert data["trace"]["refresh"]["rebuilt"] == 1
            assert data["hits"][0]["symbol"] == "issue_credit_note"
            if sys.platform.startswith("linux"):  # nothing changed since: the server's file watch says so
                again = await client.call_tool("autology_code_search", {"query": "credit note"})
                assert again.structured_content["trace"]["refresh"]["mode"] == "unchanged"

            verified = await client.call_tool("autology_index", {"action": "verify", "strict": True})
            assert not verified.is_error
            assert verified.structured_content["integrity"]["ok"] is True
    finally:
        autology.close()


async def test_bad_input_is_a_tool_error(repo: Path):
    client, autology = client_for(repo)
    try:
        async with client:
            bad = await client.call_tool("autology_code_search", {"query": "   "})
            assert bad.is_error and "Invalid query" in bad.content[0].text
            bad = await client.call_tool("autology_code_search", {"query": "socket", "top": 500})
            assert bad.is_error and "top" in bad.content[0].text
            bad = await client.call_tool("autology_index", {"action": "explode"})
            assert bad.is_error
    finally:
        autology.close()


@pytest.mark.slow
async def test_over_stdio_with_worker_processes(repo: Path):
    """The real server as a subprocess; enough files that the build uses worker processes, whose
    output must never reach the protocol on stdout."""
    import sys

    from mcp.client.stdio import StdioServerParameters

    for i in range(70):
        topic = "zq" + chr(97 + i // 26) + chr(97 + i % 26)  # zqaa, zqab, ...: one distinct word per file
        write(repo, f"pkg/handlers_{i:02d}.py", f"def handle_{topic}(event):\n    return event.kind == '{topic}'\n")
    git(repo, "add", "pkg")  # the index covers tracked files
    (repo / ".autology").mkdir(exist_ok=True)  # this test builds it: no first build of the server's own
    (repo / ".autology" / "config.toml").write_text("[index]\nauto_build = false\n")
    params = StdioServerParameters(command=sys.executable, args=["-m", "autology_mcp", "--root", str(repo), "serve"])
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    async with Client(params) as client:
        built = await client.call_tool("autology_index", {"action": "build"}, progress_callback=on_progress)
        assert not built.is_error, built.content[0].text
        assert built.structured_content["rebuilt"] == 79 and progress
        found = await client.call_tool("autology_code_search", {"query": "handle zqbq", "top": 3})
        assert found.structured_content["hits"][0]["path"] == "pkg/handlers_42.py"  # 42 = 26 + 16: "zq" "b" "q"
        verified = await client.call_tool("autology_index", {"action": "verify"})
        assert verified.structured_content["status"] == "ok"
