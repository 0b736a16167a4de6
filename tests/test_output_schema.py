"""The published output schemas are rewritten without $refs and anyOf-nullables, and mean the same."""

from __future__ import annotations

import copy

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import create_model
from referencing import Registry

from autology_mcp.knowledge.service import QueryHit
from autology_mcp.server.schemas import compact

QUERY_SCHEMA = create_model("QueryOutput", result=(list[QueryHit], ...)).model_json_schema()


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_refs_are_inlined_and_nullables_become_type_lists():
    schema = QueryHit.model_json_schema()
    assert "$defs" in schema and any("anyOf" in n for n in _walk(schema))
    out = compact(schema)
    assert "$defs" not in out
    assert not any("$ref" in n for n in _walk(out))
    assert out["properties"]["node"]["properties"]["session"]["type"] == ["string", "null"]
    assert out["properties"]["score"]["description"] == schema["properties"]["score"]["description"]


def test_the_input_is_not_modified():
    schema = QueryHit.model_json_schema()
    before = copy.deepcopy(schema)
    compact(schema)
    assert schema == before


def test_recursive_and_dangling_refs_are_left_as_they_are():
    recursive = {"$defs": {"T": {"type": "object", "properties": {"child": {"$ref": "#/$defs/T"}}}}, "$ref": "#/$defs/T"}
    assert compact(recursive) is recursive
    dangling = {"properties": {"a": {"$ref": "#/$defs/Missing"}}}
    assert compact(dangling) is dangling


def test_constraints_beside_a_ref_keep_the_original_form():
    schema = {"$defs": {"S": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/S", "type": "integer"}}}
    assert compact(schema) is schema


def test_anyof_with_richer_branches_is_kept():
    schema = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
    assert compact(schema) == schema


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["node", "score", "id", "tags"]), inner, max_size=4),
    max_leaves=12,
)
_hit = st.fixed_dictionaries(
    {
        "node": st.fixed_dictionaries(
            {
                "id": st.text(max_size=5) | st.integers(),
                "type": st.text(max_size=5),
                "title": st.text(max_size=5),
                "content": st.text(max_size=5) | st.none(),
                "tags": st.lists(st.text(max_size=3) | st.integers(), max_size=2),
                "relations": st.lists(
                    st.fixed_dictionaries(
                        {"type": st.text(max_size=3), "target": st.text(max_size=3), "confidence": st.floats(0, 1)},
                        optional={"description": st.none() | st.text(max_size=3) | st.integers()},
                    ),
                    max_size=2,
                ),
                "confidence": st.floats(0, 1) | st.text(max_size=2),
                "created": st.text(max_size=3),
                "modified": st.text(max_size=3),
                "source": st.text(max_size=3),
                "references": st.lists(st.text(max_size=3), max_size=2),
                "status": st.text(max_size=3),
            },
            optional={"session": st.none() | st.text(max_size=3) | st.integers()},
        ),
        "score": st.floats(0, 1) | st.text(max_size=2),
    }
)


@settings(max_examples=150, deadline=None)
@given(instance=st.one_of(st.fixed_dictionaries({"result": st.lists(_hit, max_size=3)}), _json))
def test_compacted_schema_accepts_exactly_what_the_original_accepts(instance):
    original = jsonschema.Draft202012Validator(QUERY_SCHEMA, registry=Registry())
    rewritten = jsonschema.Draft202012Validator(compact(QUERY_SCHEMA), registry=Registry())
    assert original.is_valid(instance) == rewritten.is_valid(instance)


async def test_every_published_output_schema_is_compact_and_valid(connect):
    async with connect() as client:
        tools = (await client.list_tools()).tools
    schemas = [t.output_schema for t in tools if t.output_schema]
    assert len(schemas) >= 7
    for schema in schemas:
        jsonschema.Draft202012Validator.check_schema(schema)
        assert not any("$ref" in n for n in _walk(schema))


async def test_published_input_schemas_are_slim_and_accept_the_same_calls(connect):
    import jsonschema

    from autology_mcp.server.schemas import slim_input_schema

    async with connect() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}

    def titles(node, naming=False):
        if isinstance(node, list):
            return sum(titles(n) for n in node)
        if not isinstance(node, dict):
            return 0
        return sum((k == "title" and not naming and isinstance(v, str)) + titles(v, k == "properties" and not naming)
                   for k, v in node.items())

    for name, tool in tools.items():
        schema = tool.input_schema
        assert titles(schema) == 0, name
        for prop_name, prop in schema.get("properties", {}).items():
            if prop_name not in schema.get("required", []):
                assert "anyOf" not in prop and prop.get("type") != "null" and "null" not in (prop.get("type") or [])
                assert "default" not in prop or prop["default"] is not None
    calls = {
        "autology_update": {"id": "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "status": "superseded", "tags": ["a"]},
        "autology_search": {"query": "why redis", "scope": ["nodes", "code"], "limit": 5, "max_tokens": 800},
        "autology_check_claims": {"claims": [{"text": "x retries", "refs": ["src/x.py:1-3"]}]},
        "autology_query": {"query": "cache", "type": "decision", "tags": ["perf"], "limit": 3},
    }
    for name, arguments in calls.items():
        jsonschema.validate(arguments, tools[name].input_schema)
    # slimming only removes: a pydantic schema with a title and a nullable optional comes out without them
    raw = {"type": "object", "title": "fArguments", "required": ["q"], "properties": {
        "q": {"type": "string", "title": "Q"},
        "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Title"},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
    }}
    assert slim_input_schema(raw) == {"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string"}, "title": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
    }}
