"""Every tool through the MCP SDK's in-memory Client; bad input to every tool gives a clear error and
changes nothing."""

from __future__ import annotations

import json

import pytest
import yaml
from core_helpers import ADR, adr, assert_graph_index_matches_files, relations_in_files, snapshot

from autology_mcp.knowledge.models import new_id

TOOLS = [
    "autology_capture",
    "autology_query",
    "autology_status",
    "autology_update",
    "autology_delete",
    "autology_relate",
    "autology_unrelate",
]


def ok(result):
    assert not result.is_error, result.content[0].text
    return result


def error_text(result, tool):
    assert result.is_error
    text = result.content[0].text
    prefix = f"Error executing tool {tool}: "
    assert text.startswith(prefix), text
    return text[len(prefix) :]


async def new_node(client, title="A node", content="Some domain knowledge.", type="concept", **kw):
    result = ok(await client.call_tool("autology_capture", {"title": title, "content": content, "type": type, **kw}))
    return result.structured_content["id"]


async def test_the_seven_tools_are_listed_with_schemas(connect):
    async with connect() as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed][: len(TOOLS)] == TOOLS  # the spec's seven first; more tools may follow
    by_name = {t.name: t for t in listed}
    capture = by_name["autology_capture"].input_schema
    assert set(capture["required"]) == {"title", "content"}
    assert "decision" in json.dumps(capture["properties"]["type"])
    assert set(by_name["autology_relate"].input_schema["required"]) == {"source", "target", "type"}
    assert set(by_name["autology_unrelate"].input_schema["required"]) == {"source", "target", "type"}
    assert by_name["autology_update"].input_schema["required"] == ["id"]
    assert by_name["autology_delete"].input_schema["required"] == ["id"]
    assert not by_name["autology_query"].input_schema.get("required")
    assert by_name["autology_query"].annotations.read_only_hint is True
    assert by_name["autology_delete"].annotations.destructive_hint is True
    for tool in listed:
        assert tool.description


async def test_an_unknown_argument_is_refused_not_dropped(connect, root):
    """A misspelt argument ('tag' for 'tags') must not silently capture a node without its tags."""
    async with connect() as client:
        listed = (await client.list_tools()).tools
        result = await client.call_tool(
            "autology_capture",
            {"title": "Auth service", "content": "The auth service issues tokens.", "type": "component", "tag": ["auth"]},
        )
        status = (await client.call_tool("autology_status", {})).structured_content
    assert all(tool.input_schema.get("additionalProperties") is False for tool in listed)
    assert result.is_error
    assert "tag" in result.content[0].text and "Extra inputs are not permitted" in result.content[0].text
    assert status["totalNodes"] == 0
    assert not list((root / ".autology" / "nodes").rglob("*.md"))


async def test_deleting_the_cache_while_serving_is_recovered(connect, root):
    """cache/ is documented as safe to delete: the server reopens and rebuilds it, losing nothing."""
    import shutil

    async with connect() as client:
        first = ok(await client.call_tool("autology_capture", {"title": "Auth service", "content": "Issues tokens.", "type": "component"}))
        shutil.rmtree(root / ".autology" / "cache")
        hits = ok(await client.call_tool("autology_query", {"query": "auth"})).structured_content["result"]
        ok(await client.call_tool("autology_capture", {"title": "Token signer", "content": "Signs tokens.", "type": "component"}))
        status = ok(await client.call_tool("autology_status", {})).structured_content
    assert [h["node"]["id"] for h in hits] == [first.structured_content["id"]]
    assert status["totalNodes"] == 2
    assert (root / ".autology" / "cache" / "nodes.sqlite").is_file()
    assert_graph_index_matches_files(root)


async def test_an_internal_error_reaches_the_model_with_its_cause_not_a_bare_message(connect, autology, monkeypatch):
    """A bug or a broken disk is not a core error, but the model still reads what failed."""
    import sqlite3

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("no such table: nodes")

    monkeypatch.setattr(autology, "query", broken)
    async with connect() as client:
        result = await client.call_tool("autology_query", {"query": "auth"})
    assert result.is_error
    text = result.content[0].text
    assert "OperationalError: no such table: nodes" in text and "autology doctor" in text
    assert text.strip() != "Error executing tool autology_query"  # what the SDK says of an unexpected exception


async def test_capture(connect, root):
    async with connect() as client:
        result = ok(
            await client.call_tool(
                "autology_capture",
                {"title": "Use FTS5", "content": ADR, "type": "decision", "tags": ["search"], "references": ["a.py"]},
            )
        )
    data = result.structured_content
    assert set(data) == {"id", "type", "confidence", "warnings"}
    assert (data["type"], data["confidence"]) == ("decision", 0.9)
    assert data["warnings"] == [f"reference 'a.py': no such file or folder under the project root {str(root)!r}"]
    assert json.loads(result.content[0].text) == data
    assert (root / ".autology" / "nodes" / "decisions" / f"{data['id']}.md").is_file()


async def test_a_title_with_line_breaks_is_joined_with_a_warning_and_injects_nothing(connect, root):
    """Issue 29: over MCP, capture and update of a title holding line breaks store it on one line and say so."""
    async with connect() as client:
        result = ok(await client.call_tool(
            "autology_capture", {"title": "Evil\n---\nid: evil\n---", "content": "Body.", "type": "concept"}))
        data = result.structured_content
        assert set(data) == {"id", "type", "confidence", "warnings"}
        assert len(data["warnings"]) == 1 and "stored as 'Evil --- id: evil ---'" in data["warnings"][0]
        text = (root / ".autology" / "nodes" / "concepts" / f"{data['id']}.md").read_text(encoding="utf-8")
        front = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
        assert (front["id"], front["title"]) == (data["id"], "Evil --- id: evil ---")
        updated = ok(await client.call_tool("autology_update", {"id": data["id"], "title": "Two\nlines"}))
        assert updated.content[0].text.startswith("✓ Updated: Two lines (concept)\nFields changed: title\nWarning: ")
        assert "stored as 'Two lines'" in updated.content[0].text


async def test_capture_classifies_without_type(connect):
    async with connect() as client:
        result = ok(
            await client.call_tool(
                "autology_capture",
                {"title": "Checkout crashes", "content": "Bug: checkout crashes with a null error; workaround below."},
            )
        )
    assert (result.structured_content["type"], result.structured_content["confidence"]) == ("issue", 0.7)


async def test_query(connect):
    async with connect() as client:
        a = await new_node(client, "Caching strategy", "LRU with a size bound.", tags=["perf"])
        await new_node(client, "Other", "unrelated")
        result = ok(await client.call_tool("autology_query", {"query": "caching"}))
        hits = result.structured_content["result"]
        assert [h["node"]["id"] for h in hits] == [a]
        node = hits[0]["node"]
        assert set(node) == {
            "id", "type", "title", "content", "tags", "relations", "confidence", "created", "modified",
            "session", "source", "references", "status",
        }  # fmt: skip
        assert node["tags"] == ["perf"] and node["created"].endswith("Z")
        assert 0 < hits[0]["score"] <= 1
        everything = ok(await client.call_tool("autology_query", {})).structured_content["result"]
        assert len(everything) == 2
        assert [h["score"] for h in everything] == [None, None]  # a listing ranks nothing: no made-up score
        filtered = ok(await client.call_tool("autology_query", {"type": "concept", "tags": ["perf"], "limit": 5}))
        assert [h["node"]["id"] for h in filtered.structured_content["result"]] == [a]
        empty = ok(await client.call_tool("autology_query", {"query": "zebra"}))
        assert empty.structured_content == {"result": []}


async def test_an_empty_query_is_a_listing_without_scores(connect):
    """Issue 16: no search text lists the most recently modified nodes; the answer keeps seed 004's
    ``[{node, score}]`` shape but says "not ranked" with score null (documented in the output
    schema), where it used to give every node 1.0."""
    async with connect() as client:
        first = await new_node(client, "First", "one")
        second = await new_node(client, "Second", "two")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        score = tools["autology_query"].output_schema["properties"]["result"]["items"]["properties"]["score"]
        assert score["type"] == ["number", "null"] and "null without search text" in score["description"]
        for arguments in ({}, {"query": ""}, {"query": "   "}):
            result = ok(await client.call_tool("autology_query", arguments))
            hits = result.structured_content["result"]
            assert [h["node"]["id"] for h in hits] == [second, first]
            assert [h["score"] for h in hits] == [None, None]
            assert json.loads(result.content[0].text) == hits
        ranked = ok(await client.call_tool("autology_query", {"query": "second"})).structured_content["result"]
        assert [h["node"]["id"] for h in ranked] == [second] and 0 < ranked[0]["score"] <= 1


async def test_status(connect):
    async with connect() as client:
        a = await new_node(client, "A", type="component")
        b = await new_node(client, "B", type="component")
        ok(await client.call_tool("autology_relate", {"source": a, "target": b, "type": "uses"}))
        data = ok(await client.call_tool("autology_status", {})).structured_content
    assert data["totalNodes"] == 2
    assert data["nodesByType"]["component"] == 2
    assert data["totalRelations"] == 1
    assert data["relationsByType"]["uses"] == 1
    assert set(data["relationsByType"]) == {
        "affects", "uses", "supersedes", "relates_to", "implements", "depends_on", "derived_from",
    }  # fmt: skip
    assert data["malformedFiles"] == []


async def test_update(connect):
    async with connect() as client:
        a = await new_node(client, "Old title")
        result = ok(await client.call_tool("autology_update", {"id": a, "title": "New title", "status": "needs_review"}))
        assert result.content[0].text == "✓ Updated: New title (concept)\nFields changed: title, status"
        hit = ok(await client.call_tool("autology_query", {"query": "new title"})).structured_content["result"][0]
        assert hit["node"]["status"] == "needs_review"
        assert hit["node"]["content"] == "Some domain knowledge."


async def test_delete(connect, root):
    async with connect() as client:
        a = await new_node(client, "A")
        b = await new_node(client, "B")
        ok(await client.call_tool("autology_relate", {"source": a, "target": b, "type": "uses"}))
        ok(await client.call_tool("autology_relate", {"source": b, "target": a, "type": "affects"}))
        result = ok(await client.call_tool("autology_delete", {"id": b}))
        assert result.content[0].text == "✓ Deleted: B (concept)\nRelations removed: 2"
    assert relations_in_files(root) == set()
    assert_graph_index_matches_files(root)


async def test_relate_and_unrelate(connect, root):
    async with connect() as client:
        a = await new_node(client, "A")
        b = await new_node(client, "B")
        result = ok(
            await client.call_tool(
                "autology_relate",
                {"source": a, "target": b, "type": "implements", "description": "A realises B", "confidence": 0.7},
            )
        )
        assert result.content[0].text == f"✓ Related: {a} —[implements]→ {b}"
        assert relations_in_files(root) == {(a, b, "implements", "A realises B", 0.7)}
        ok(await client.call_tool("autology_relate", {"source": a, "target": b, "type": "implements", "confidence": 0.9}))
        assert relations_in_files(root) == {(a, b, "implements", "A realises B", 0.9)}
        assert_graph_index_matches_files(root)
        result = ok(await client.call_tool("autology_unrelate", {"source": a, "target": b, "type": "implements"}))
        assert result.content[0].text == f"✓ Removed relation: {a} —[implements]→ {b}"
        assert relations_in_files(root) == set()
        again = ok(await client.call_tool("autology_unrelate", {"source": a, "target": b, "type": "implements"}))
        assert again.content[0].text.startswith(f"✓ Removed relation: {a} —[implements]→ {b}")
    assert_graph_index_matches_files(root)


# ------------------------------------------------------------------------------ bad input, every tool

MISSING = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"

BAD_CALLS = [
    # (tool, arguments, words the error must contain)
    ("autology_capture", {"content": "x", "type": "concept"}, ["title", "required"]),
    ("autology_capture", {"title": "t", "type": "concept"}, ["content", "required"]),
    ("autology_capture", {"title": "", "content": "x", "type": "concept"}, ["Invalid title", "empty"]),
    ("autology_capture", {"title": "x" * 101, "content": "x", "type": "concept"}, ["Invalid title", "100"]),
    ("autology_capture", {"title": "t", "content": "   ", "type": "concept"}, ["Invalid content", "empty"]),
    ("autology_capture", {"title": "t", "content": "x", "type": "idea"}, ["Invalid type", "allowed: decision"]),
    ("autology_capture", {"title": "t", "content": "x", "type": "concept", "tags": ["Bad Tag"]}, ["Invalid tags", "try 'bad-tag'"]),
    ("autology_capture", {"title": "t", "content": "x", "type": "concept", "tags": "auth"}, ["tags"]),
    ("autology_capture", {"title": "t", "content": "x", "type": "concept", "references": ["../etc/x"]}, ["Invalid references", "inside the project"]),
    ("autology_capture", {"title": "D", "content": "## Context\nx", "type": "decision"}, ["ADR", "Decision, Alternatives, Consequences", "## Consequences"]),
    ("autology_query", {"limit": 0}, ["Invalid limit", "1 to 100"]),
    ("autology_query", {"limit": 101}, ["Invalid limit", "1 to 100"]),
    ("autology_query", {"type": "ideas"}, ["Invalid type", "allowed"]),
    ("autology_query", {"tags": ["UPPER"]}, ["Invalid tags"]),
    ("autology_query", {"query": 42}, ["query"]),
    ("autology_update", {"id": "../../etc/passwd", "title": "x"}, ["Invalid id", "UUID v4"]),
    ("autology_update", {"id": "{A}"}, ["no fields to update"]),
    ("autology_update", {"id": MISSING, "title": "x"}, [f"Node not found: {MISSING}"]),
    ("autology_update", {"id": "{A}", "status": "archived"}, ["Invalid status", "allowed: active, needs_review, superseded"]),
    ("autology_update", {"id": "{A}", "confidence": 1.5}, ["Invalid confidence", "between 0.0 and 1.0"]),
    ("autology_update", {"id": "{A}", "confidence": 0.3}, ["below the minimum"]),
    ("autology_update", {"id": "{A}", "title": "   "}, ["Invalid title"]),
    ("autology_update", {"id": "{A}", "references": ["/etc/passwd"]}, ["Invalid references"]),
    ("autology_update", {"id": "{D}", "content": "no sections"}, ["ADR", "missing section(s): Context, Decision, Alternatives, Consequences"]),
    ("autology_update", {"title": "x"}, ["id", "required"]),
    ("autology_delete", {"id": "../../etc/passwd"}, ["Invalid id", "UUID v4"]),
    ("autology_delete", {"id": MISSING}, [f"Node not found: {MISSING}"]),
    ("autology_delete", {}, ["id", "required"]),
    ("autology_relate", {"source": "{A}", "target": MISSING, "type": "uses"}, [f"Target node not found: {MISSING}"]),
    ("autology_relate", {"source": MISSING, "target": "{A}", "type": "uses"}, [f"Source node not found: {MISSING}"]),
    ("autology_relate", {"source": "{A}", "target": "{B}", "type": "loves"}, ["Invalid type", "allowed: affects"]),
    ("autology_relate", {"source": "{A}", "target": "{A}", "type": "uses"}, ["itself"]),
    ("autology_relate", {"source": "{A}", "target": "{B}", "type": "uses", "confidence": -1}, ["Invalid confidence"]),
    ("autology_relate", {"source": "../x", "target": "{B}", "type": "uses"}, ["Invalid source", "UUID v4"]),
    ("autology_relate", {"source": "{A}", "target": "../x", "type": "uses"}, ["Invalid target", "UUID v4"]),
    ("autology_relate", {"source": "{A}", "target": "{B}"}, ["type", "required"]),
    ("autology_unrelate", {"source": "../x", "target": "{B}", "type": "uses"}, ["Invalid source", "UUID v4"]),
    ("autology_unrelate", {"source": "{A}", "target": "x", "type": "uses"}, ["Invalid target", "UUID v4"]),
    ("autology_unrelate", {"source": "{A}", "target": "{B}", "type": "hates"}, ["Invalid type", "allowed"]),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "words"), BAD_CALLS, ids=[f"{t}-{i}" for i, (t, *_) in enumerate(BAD_CALLS)])
async def test_bad_input_gives_a_clear_error_and_changes_nothing(connect, autology, root, tool, arguments, words):
    a = autology.capture("A", "a", type="concept").id
    b = autology.capture("B", "b", type="concept").id
    d = autology.capture("D", adr(), type="decision").id
    autology.relate(a, b, "uses")
    filled = {
        k: (v.replace("{A}", a).replace("{B}", b).replace("{D}", d) if isinstance(v, str) else v)
        for k, v in arguments.items()
    }
    before = snapshot(root)
    async with connect() as client:
        result = await client.call_tool(tool, filled)
    message = error_text(result, tool)
    for word in words:
        assert word in message, message
    assert snapshot(root) == before
    assert autology.status().totalNodes == 3


async def test_a_new_id_per_capture_and_nothing_shared(connect):
    async with connect() as client:
        made = {await new_node(client, f"N{i}") for i in range(5)}
    assert len(made) == 5
    assert all(len(i) == 36 for i in made)
    assert new_id() not in made


async def test_query_text_output_is_one_json_array(connect, capture):
    """The spec's output is an array: one text block holding it, also when there are no matches."""
    for i in range(3):
        capture(f"Common {i}", "common words")
    async with connect() as client:
        result = ok(await client.call_tool("autology_query", {"query": "common"}))
        assert len(result.content) == 1
        assert json.loads(result.content[0].text) == result.structured_content["result"]
        assert len(result.structured_content["result"]) == 3
        empty = ok(await client.call_tool("autology_query", {"query": "zebra"}))
        assert [json.loads(block.text) for block in empty.content] == [[]]


async def test_status_reports_malformed_files_and_the_tools_skip_them(connect, autology, root):
    bad = root / ".autology" / "nodes" / "issues" / "broken.md"
    bad.write_text("---\ntitle: [unclosed\n---\n")
    autology.store.reconcile()
    async with connect() as client:
        good = await new_node(client, "Good one", "good words")
        status = ok(await client.call_tool("autology_status", {})).structured_content
        assert status["totalNodes"] == 1
        assert status["malformedFiles"] == [
            {"path": ".autology/nodes/issues/broken.md", "reason": status["malformedFiles"][0]["reason"]}
        ]
        assert "invalid YAML frontmatter" in status["malformedFiles"][0]["reason"]
        hits = ok(await client.call_tool("autology_query", {})).structured_content["result"]
        assert [h["node"]["id"] for h in hits] == [good]
    assert bad.read_text() == "---\ntitle: [unclosed\n---\n"
