"""autology_search and autology_context through the MCP SDK's in-memory Client."""

from __future__ import annotations

import json

from mcp import Client
from retrieval_fixtures import project  # noqa: F401

from autology_mcp.retrieval.budget import compact_json
from autology_mcp.server.app import build_server


def client(project):
    return Client(build_server(project.autology))


async def test_tools_are_listed_read_only_with_their_arguments(project):
    async with client(project) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    search = tools["autology_search"]
    assert search.annotations.read_only_hint is True
    assert set(search.input_schema["properties"]) == {"query", "scope", "limit", "max_tokens", "detail"}
    assert search.input_schema["required"] == ["query"]
    assert "sessions" in json.dumps(search.input_schema["properties"]["scope"])
    ctx = tools["autology_context"]
    assert ctx.annotations.read_only_hint is True
    assert set(ctx.input_schema["properties"]) == {"task", "module_hint", "max_tokens"}


async def test_search_over_mcp(project):
    async with client(project) as c:
        result = await c.call_tool(
            "autology_search", {"query": "websocket reconnect backoff", "scope": ["nodes", "code"], "limit": 3}
        )
    assert not result.is_error, result.content[0].text
    answer = result.structured_content
    assert answer["verdict"] == "grounded"
    assert 1 <= len(answer["hits"]) <= 3
    assert {h["kind"] for h in answer["hits"]} <= {"node", "code"}
    assert json.loads(result.content[0].text) == answer
    assert result.content[0].text == compact_json(answer)
    assert answer["cut"]["used_tokens"] <= 2000


async def test_search_respects_max_tokens_over_mcp(project):
    async with client(project) as c:
        result = await c.call_tool("autology_search", {"query": "websocket invoice cache sessions", "max_tokens": 300})
    assert not result.is_error
    text = result.content[0].text
    assert len(text) <= 300 * 4


async def test_context_over_mcp(project):
    async with client(project) as c:
        result = await c.call_tool(
            "autology_context", {"task": "change the websocket reconnect backoff", "module_hint": "src/net"}
        )
    assert not result.is_error, result.content[0].text
    bundle = result.structured_content
    assert bundle["schema_version"] == "autology_bundle_v1"
    assert bundle["module_hint"] == "src/net"
    assert [m["id"] for m in bundle["structured_memory"]["decisions"]][0] == project.ids["reconnect"]
    assert bundle["task_retrieval"][0]["path"] == "src/net/websocket.py"


async def test_bad_arguments_are_tool_errors(project):
    async with client(project) as c:
        empty = await c.call_tool("autology_search", {"query": "  "})
        scope = await c.call_tool("autology_search", {"query": "x", "scope": ["wiki"]})
        small = await c.call_tool("autology_search", {"query": "x", "max_tokens": 10})
        task = await c.call_tool("autology_context", {"task": ""})
        unknown = await c.call_tool("autology_search", {"query": "x", "top": 3})
    assert empty.is_error and "query" in empty.content[0].text
    assert scope.is_error
    assert small.is_error and "max_tokens" in small.content[0].text
    assert task.is_error and "task" in task.content[0].text
    assert unknown.is_error


async def test_each_answer_is_counted_in_the_ledger(project):
    from autology_mcp.retrieval import ledger

    before = ledger.counters(project.root)["verdicts"]
    async with client(project) as c:
        await c.call_tool("autology_search", {"query": "quantum teleportation"})
        await c.call_tool("autology_context", {"task": "websocket reconnect backoff"})
    after = ledger.counters(project.root)["verdicts"]
    assert after["no_evidence"] == before["no_evidence"] + 1
    assert after["grounded"] == before["grounded"] + 1
