"""Bad input, through the MCP SDK's in-memory Client, to every tool the server lists.

- A hypothesis fuzz suite whose strategies are derived from each tool's published inputSchema (so a
  tool added later is fuzzed too), mixing schema-valid values with wrong types, NaN and infinities,
  path traversal, YAML syntax, control characters, unicode, huge values, missing and unknown keys.
- A table of adversarial cases with the exact outcome each must have.

Every call gets a clear error or a faithful round trip (what was stored reads back from the file as
the validated input); nothing is written outside ``.autology/``; an error leaves the store unchanged;
and the server keeps serving (a follow-up call succeeds).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from core_helpers import adr, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from autology_mcp.knowledge.markdown import parse_node
from autology_mcp.knowledge.models import (
    CONTENT_MAX,
    NodeType,
    TAGS_MAX,
    TITLE_MAX,
    validate_content,
    validate_tags,
    validate_title,
)
from autology_mcp.knowledge.service import Autology
from autology_mcp.server.app import build_server

ERROR_PREFIX = re.compile(r"^(Error executing tool \w+: |Invalid |.*validation error)", re.S)


def outside_autology(tmp: Path) -> dict[str, int]:
    """Every file under the temp dir except .autology/ and the repo index's own folder: path -> size."""
    return {
        p.relative_to(tmp).as_posix(): p.stat().st_size
        for p in tmp.rglob("*")
        if p.is_file() and ".autology" not in p.relative_to(tmp).parts
    }


class Session:
    """One server (one Autology on a temp project) and one in-memory client, kept open across calls."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.root = tmp / "project"
        self.root.mkdir()
        (self.root / "src").mkdir()
        (self.root / "src" / "app.py").write_text("def main():\n    return 42\n")
        self.autology = Autology.open(self.root)
        self.seed()
        self._portal_cm = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._client_cm = self.portal.wrap_async_context_manager(Client(build_server(self.autology)))
        self.client = self._client_cm.__enter__()
        self.tools = {t.name: t for t in self.portal.call(self.client.list_tools).tools}
        self.calls = 0

    def seed(self) -> None:
        """Fresh nodes A, B (A uses B) and a decision D: the fuzzer may have changed or deleted the last ones."""
        self.a = self.autology.capture("Alpha", "alpha words", type="concept", tags=["alpha"]).id
        self.b = self.autology.capture("Beta", "beta words", type="component").id
        self.d = self.autology.capture("Decision", adr(), type="decision").id
        self.autology.relate(self.a, self.b, "uses")

    def call(self, tool: str, arguments: dict[str, Any]):
        self.calls += 1
        return self.portal.call(self.client.call_tool, tool, arguments)

    def alive(self) -> None:
        result = self.call("autology_status", {})
        assert not result.is_error and result.structured_content["totalNodes"] >= 0

    def close(self) -> None:
        self._client_cm.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)
        self.autology.close()


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = Session(tmp_path_factory.mktemp("bad-input"))
    yield s
    s.close()


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def assert_clear_error(result, tool: str) -> str:
    text = text_of(result)
    assert result.is_error and text.strip(), (tool, text)
    assert "Traceback" not in text, text
    assert len(text) < 20_000, f"error message of {len(text)} characters"
    return text


# ------------------------------------------------------------------------------ values derived from the schemas

NASTY_STRINGS = [
    "", " ", "\n", "../../etc/passwd", "..\\..\\windows\\system32", "/etc/passwd", "C:\\x", "~/x", "file:///etc/passwd",
    "%2e%2e%2fetc", "a\x00b", "\x1b[31mred\x1b[0m", "\u2028", "\ufeff", "\ud800", "---", "--- \nid: x\n---",
    "title: x\nid: evil", "!!python/object/apply:os.system ['id']", "&a [*a, *a]", "{a: 1}", "[1, 2]", "null", "~",
    "2026-01-01", "1e3", "'", '"', "#", "|", ">", "@", "`", "*", "%", "\\", "[[x]]", "# Title", "## Related",
    "🙂", "مرحبا", "𝔘𝔫𝔦", "e\u0301", "\u200d", "x" * 5000, "concept", "uses", "active", "neighbours", "status",
]  # fmt: skip
NASTY_NUMBERS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.49, 0.5, 1.0, 1.0000001, -1, 1e308, 2**63, -(2**63), 0, 101]


def _any_json() -> st.SearchStrategy:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.sampled_from(NASTY_NUMBERS),
        st.text(max_size=30), st.sampled_from(NASTY_STRINGS),
    )  # fmt: skip
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref and ref.startswith("#/$defs/"):
        return {**defs[ref.split("/")[-1]], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def from_schema(schema: dict[str, Any], defs: dict[str, Any], ids: list[str], depth: int = 0) -> st.SearchStrategy:
    """Values the schema allows (biased towards the interesting ones: boundaries, enums, real ids)."""
    schema = _resolve(schema, defs)
    if "enum" in schema and not schema.get("anyOf"):
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        options = []
        for option in schema["anyOf"]:
            option = _resolve(option, defs)
            if option.get("type") == "string" and "enum" in schema:
                option = {**option, "enum": schema["enum"]}
            if option.get("type") == "array" and "items" in schema:
                option = {**option, "items": schema["items"]}
            options.append(from_schema(option, defs, ids, depth))
        return st.one_of(options)
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(st.sampled_from(ids), st.text(max_size=40), st.sampled_from(NASTY_STRINGS))
    if kind == "integer":
        low = schema.get("minimum", -5)
        high = schema.get("maximum", max(low, 0) + 200)
        return st.one_of(st.integers(low, high), st.sampled_from([low - 1, high + 1, 0, -1, 2**31]))
    if kind == "number":
        return st.one_of(st.floats(0, 1), st.sampled_from(NASTY_NUMBERS))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs, ids, depth + 1) if depth < 3 else _any_json()
        return st.lists(items, max_size=min(schema.get("maxItems", 6) + 1, 8))
    if kind == "object" and depth < 3:
        return object_from_schema(schema, defs, ids, depth + 1)
    return _any_json()


def object_from_schema(schema: dict[str, Any], defs: dict[str, Any], ids: list[str], depth: int = 0) -> st.SearchStrategy:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))

    @st.composite
    def build(draw):
        value: dict[str, Any] = {}
        for name, prop in properties.items():
            mode = draw(st.sampled_from(["valid"] * 6 + ["wrong", "omit"]))
            if mode == "omit" or (name not in required and mode == "valid" and draw(st.booleans())):
                continue
            value[name] = draw(from_schema(prop, defs, ids, depth) if mode == "valid" else _any_json())
        if draw(st.integers(0, 9)) == 0:
            value[draw(st.sampled_from(["tag", "id2", "__proto__", "$ref", "extra"]))] = draw(_any_json())
        return value

    return build()


# Bounded for CI; fuzz longer with e.g. AUTOLOGY_FUZZ_EXAMPLES=5000 pytest tests/test_bad_input.py -k fuzz
FUZZ_EXAMPLES = int(os.environ.get("AUTOLOGY_FUZZ_EXAMPLES", "200"))


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fuzz_every_tool_from_its_input_schema(session, data):
    tool = data.draw(st.sampled_from(sorted(session.tools)), label="tool")
    schema = session.tools[tool].input_schema
    ids = [session.a, session.b, session.d, session.a.upper(), "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"]
    arguments = data.draw(object_from_schema(schema, schema.get("$defs", {}), ids), label="arguments")
    outside, before = outside_autology(session.tmp), snapshot(session.root)
    result = session.call(tool, arguments)
    if result.is_error:
        assert_clear_error(result, tool)
        assert snapshot(session.root) == before  # an error changes nothing
    elif tool == "autology_capture":
        node_id = result.structured_content["id"]
        stored = parse_node(next(session.root.glob(f".autology/nodes/*/{node_id}.md")).read_text(encoding="utf-8"))
        assert stored.title == validate_title(arguments["title"])
        assert stored.content == validate_content(arguments["content"])
        assert stored.tags == validate_tags(arguments.get("tags"))
    assert outside_autology(session.tmp) == outside  # nothing written outside .autology/
    session.alive()


# ------------------------------------------------------------------------------ the adversarial table

UUID_MISSING = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
YAML_TITLES = [
    "title: x", "id: 00000000-0000-4000-8000-000000000000", "---", "--- x", "!!python/object/apply:os.system ['id']",
    "&anchor *alias", "{a: 1}", "[1, 2]", "'single'", '"double"', "# not a comment", "null", "true", "~", "1e3",
    "2026-01-01", "0x1F", "key: [unclosed", "a: b: c", "@at `tick` | pipe > fold %percent", "- list item",
    "? complex key", "<<: *merge", "!tag value", "=", "[[wikilink]]",
]  # fmt: skip
YAML_CONTENTS = [
    "---\nid: 00000000-0000-4000-8000-000000000000\ntype: decision\n---\nbody",
    "---\n---\n---",
    "## Related\n- [[00000000-0000-4000-8000-000000000000]]",
    "```yaml\n---\ntitle: inside a fence\n---\n```",
    "title: x\nrelations:\n- type: uses\n  target: ../../etc/passwd",
    "!!python/object/apply:os.system ['touch /tmp/pwned']",
    "line with trailing spaces   \nand\ttabs\r\nand CRLF\rand CR",
]
UNICODE = ["🙂 emoji 👩‍👩‍👧", "مرحبا بالعالم", "日本語のタイトル", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "e\u0301 combining", "zero\u200dwidth", "Ünïcödé ñ"]

# (tool, arguments, "ok" for a faithful round trip or the words the error must contain)
CASES: list[tuple[str, dict[str, Any], Any]] = (
    [("autology_capture", {"title": t, "content": "body", "type": "concept"}, "ok") for t in YAML_TITLES]
    + [("autology_capture", {"title": "YAML content", "content": c, "type": "concept"}, "ok") for c in YAML_CONTENTS]
    + [("autology_capture", {"title": u, "content": f"{u}\n\n{u}", "type": "concept"}, "ok") for u in UNICODE]
    + [
        # path traversal: ids and references
        ("autology_update", {"id": "../../etc/passwd", "title": "x"}, ["Invalid id", "UUID v4"]),
        ("autology_update", {"id": f"{UUID_MISSING}/../../x", "title": "x"}, ["Invalid id"]),
        ("autology_delete", {"id": "..%2F..%2Fetc%2Fpasswd"}, ["Invalid id"]),
        ("autology_delete", {"id": f"../decisions/{UUID_MISSING}"}, ["Invalid id"]),
        ("autology_delete", {"id": UUID_MISSING + "\x00.md"}, ["Invalid id"]),
        ("autology_relate", {"source": "{A}", "target": "../../../../etc/passwd", "type": "uses"}, ["Invalid target"]),
        ("autology_relate", {"source": "/etc/passwd", "target": "{A}", "type": "uses"}, ["Invalid source"]),
        ("autology_unrelate", {"source": "{A}", "target": "C:\\Windows", "type": "uses"}, ["Invalid target"]),
        ("autology_graph", {"operation": "neighbours", "id": "../../etc/passwd"}, ["id"]),
        ("autology_graph", {"operation": "path", "id": "{A}", "target": "/etc/passwd"}, ["target"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "references": ["../../etc/passwd"]}, ["Invalid references", "inside the project"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "references": ["/etc/passwd"]}, ["Invalid references"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "references": ["src/../../secret"]}, ["Invalid references"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "references": ["C:\\secret.txt"]}, ["Invalid references"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "references": ["src/\x00app.py"]}, ["Invalid references"]),
        ("autology_update", {"id": "{A}", "references": ["..\\..\\boot.ini"]}, ["Invalid references"]),
        ("autology_capture", {"title": "Good refs", "content": "c", "type": "concept", "references": ["src/app.py#L1-2", "./src/app.py#main"]}, "ok"),
        # huge values
        ("autology_capture", {"title": "Huge", "content": "x" * (CONTENT_MAX + 1), "type": "concept"}, ["Invalid content", f"limit is {CONTENT_MAX}"]),
        ("autology_capture", {"title": "At the limit", "content": "y" * CONTENT_MAX, "type": "concept"}, "ok"),
        ("autology_update", {"id": "{A}", "content": "z" * (CONTENT_MAX * 5)}, ["Invalid content", "limit"]),
        ("autology_capture", {"title": "t" * 10_000, "content": "c", "type": "concept"}, ["Invalid title", f"limit is {TITLE_MAX}"]),
        ("autology_capture", {"title": "Tags", "content": "c", "type": "concept", "tags": [f"t{i}" for i in range(TAGS_MAX + 1)]}, ["Invalid tags", f"limit is {TAGS_MAX}"]),
        ("autology_capture", {"title": "Tag", "content": "c", "type": "concept", "tags": ["a" * 65]}, ["Invalid tags"]),
        ("autology_capture", {"title": "Refs", "content": "c", "type": "concept", "references": [f"f{i}.py" for i in range(65)]}, ["Invalid references", "limit"]),
        ("autology_relate", {"source": "{A}", "target": "{B}", "type": "uses", "description": "d" * 501}, ["Invalid description", "500"]),
        ("autology_query", {"query": "needle " * 50_000}, "ok"),
        ("autology_query", {"query": '"unbalanced AND OR NOT ( * ^ NEAR/3 col:x'}, "ok"),
        # control characters
        ("autology_capture", {"title": "nul\x00byte", "content": "c", "type": "concept"}, ["Invalid title", "control"]),
        ("autology_capture", {"title": "t", "content": "bell\x07", "type": "concept"}, ["Invalid content", "control character"]),
        ("autology_capture", {"title": "t", "content": "ansi \x1b[31mred", "type": "concept"}, ["Invalid content"]),
        ("autology_capture", {"title": "line\u2028separator", "content": "c", "type": "concept"}, "ok"),  # one line: a space
        ("autology_capture", {"title": "t", "content": "bom\ufeff", "type": "concept"}, ["Invalid content"]),
        ("autology_capture", {"title": "t", "content": "lone \ud800 surrogate", "type": "concept"}, ["Invalid content"]),
        ("autology_relate", {"source": "{A}", "target": "{B}", "type": "uses", "description": "esc\x1b"}, ["Invalid description", "control"]),
        ("autology_capture", {"title": "Tabs\tand  spaces\nnewline", "content": "c", "type": "concept"}, "ok"),
        # wrong types
        ("autology_capture", {"title": 123, "content": "c", "type": "concept"}, ["title"]),
        ("autology_capture", {"title": None, "content": "c", "type": "concept"}, ["title"]),
        ("autology_capture", {"title": ["a"], "content": "c", "type": "concept"}, ["title"]),
        ("autology_capture", {"title": "t", "content": {"a": 1}, "type": "concept"}, ["content"]),
        ("autology_capture", {"title": "t", "content": "c", "type": 5}, ["type"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "tags": "auth"}, ["tags"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "tags": [1, 2]}, ["tags"]),
        ("autology_capture", {"title": "t", "content": "c", "type": "concept", "tags": [None]}, ["tags"]),
        ("autology_query", {"limit": "ten"}, ["limit"]),
        ("autology_query", {"limit": 1.5}, ["limit"]),
        ("autology_query", {"limit": 10**30}, ["limit"]),
        ("autology_query", {"tags": {"a": 1}}, ["tags"]),
        ("autology_update", {"id": 42, "title": "x"}, ["id"]),
        ("autology_update", {"id": None, "title": "x"}, ["id"]),
        ("autology_update", {"id": "{A}", "confidence": "high"}, ["confidence"]),
        ("autology_update", {"id": "{A}", "status": ["active"]}, ["status"]),
        ("autology_relate", {"source": "{A}", "target": "{B}", "type": ["uses"]}, ["type"]),
        ("autology_relate", {"source": "{A}", "target": "{B}", "type": "uses", "confidence": "1"}, "ok"),  # the SDK's lax 1.0
        ("autology_delete", {"id": {"$ne": None}}, ["id"]),
        ("autology_status", {"verbose": True}, ["verbose", "Extra inputs are not permitted"]),
        # NaN and infinities cannot cross the SDK client (its JSON turns them into null): see the raw-wire test
        ("autology_update", {"id": "{A}", "confidence": -0.0}, ["below the minimum"]),
        ("autology_relate", {"source": "{A}", "target": "{B}", "type": "uses", "confidence": 1e308}, ["Invalid confidence"]),
        ("autology_relate", {"source": "{A}", "target": "{B}", "type": "uses", "confidence": -1e-308}, ["Invalid confidence"]),
    ]
)  # fmt: skip


def _fill(value: Any, s: Session) -> Any:
    if isinstance(value, str):
        return value.replace("{A}", s.a).replace("{B}", s.b).replace("{D}", s.d)
    if isinstance(value, list):
        return [_fill(v, s) for v in value]
    return value


@pytest.mark.parametrize(("tool", "arguments", "expected"), CASES, ids=[f"{i}-{t}" for i, (t, *_) in enumerate(CASES)])
def test_adversarial_case(session, tool, arguments, expected):
    session.seed()
    arguments = {k: _fill(v, session) for k, v in arguments.items()}
    outside, before = outside_autology(session.tmp), snapshot(session.root)
    result = session.call(tool, arguments)
    if expected == "ok":
        assert not result.is_error, text_of(result)
        if tool == "autology_capture":  # a faithful round trip: the file says what was validated
            node_id = result.structured_content["id"]
            path = next(session.root.glob(f".autology/nodes/*/{node_id}.md"))
            stored = parse_node(path.read_text(encoding="utf-8"))
            assert stored.id == node_id and stored.type.value == arguments["type"]
            assert stored.title == validate_title(arguments["title"])
            assert stored.content == validate_content(arguments["content"])
            assert session.autology.get(node_id).title == stored.title  # and the index agrees
            hits = session.call("autology_query", {"query": stored.title, "limit": 100})
            assert not hits.is_error
    else:
        message = assert_clear_error(result, tool)
        for word in expected:
            assert word in message, message
        assert snapshot(session.root) == before  # an error changes nothing
    assert outside_autology(session.tmp) == outside  # nothing written outside .autology/
    session.alive()  # and the server keeps serving


UNTYPED_CAPTURES = [  # issue 16: over MCP, 8 of 8 ordinary captures without a type used to be refused
    ("T" * 100, "A title of the longest length allowed."),
    ("key: [unclosed & *alias", "YAML-special characters in the title."),
    ("123", "A title that is a number."),
    ("2026-01-01", "A title that is a date."),
    ("Ünïcödé ñ 日本語", "Unicode in the title and the content: naïve café."),
    ("Release 🎉 party 🚀", "Emoji in the title."),
    ("HTTP/2 is opt-in", "Clients pass http2=True to enable it."),
    ("Timeout defaults", "All clients default to a five second timeout."),
]


@pytest.mark.parametrize(("title", "content"), UNTYPED_CAPTURES, ids=[str(i) for i in range(len(UNTYPED_CAPTURES))])
def test_a_capture_without_a_type_is_stored(session, title, content):
    result = session.call("autology_capture", {"title": title, "content": content})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["confidence"] == 0.7 and data["type"] in {t.value for t in NodeType}
    stored = parse_node(next(session.root.glob(f".autology/nodes/*/{data['id']}.md")).read_text(encoding="utf-8"))
    assert stored.title == validate_title(title) and stored.type.value == data["type"]
    if stored.status.value == "needs_review":  # unsure: stored, and the result says so
        assert "needs_review" in text_of(result)


JSON_LOOKING = ["null", "true", "false", "[1, 2]", '{"a": 1}', "[]", "{}", '"quoted"', "42", "-1.5e3"]


@pytest.mark.parametrize("text", JSON_LOOKING)
def test_strings_that_look_like_json_arrive_as_strings(session, text):
    """The SDK decodes JSON text in arguments not typed exactly ``str``: content ``null`` used to reach
    autology_update as None, so the update silently skipped it."""
    session.seed()
    result = session.call("autology_update", {"id": session.a, "title": f"T {text}", "content": text})
    assert not result.is_error, text_of(result)
    assert "content" in text_of(result)
    path = next(session.root.glob(f".autology/nodes/*/{session.a}.md"))
    stored = parse_node(path.read_text(encoding="utf-8"))
    assert (stored.title, stored.content) == (validate_title(f"T {text}"), text)
    related = session.call("autology_relate", {"source": session.a, "target": session.b, "type": "uses", "description": text})
    assert not related.is_error, text_of(related)
    assert parse_node(path.read_text(encoding="utf-8")).relations[0].description == text
    query = session.call("autology_query", {"query": text})
    assert not query.is_error, text_of(query)
    # lists sent as JSON text (as some clients do) are still decoded
    tagged = session.call("autology_update", {"id": session.a, "tags": '["json-text", "alpha"]'})
    assert not tagged.is_error and parse_node(path.read_text(encoding="utf-8")).tags == ("json-text", "alpha")


RAW_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"]


@pytest.mark.slow
def test_nan_and_infinity_on_the_wire_are_refused_by_the_real_server(tmp_path):
    """A client that writes NaN/Infinity tokens into its JSON (Python's json.dumps does) reaches the
    server's validators: every one is a clear error, nothing is written, and the server keeps serving."""
    from fault_kit import RawServer, result_text, tool_result

    root = tmp_path / "project"
    root.mkdir()
    service = Autology.open(root)
    a = service.capture("Alpha", "alpha", type="concept").id
    b = service.capture("Beta", "beta", type="concept").id
    service.close()
    before = snapshot(root)
    server = RawServer(root)
    tried = 0
    try:
        server.initialize()
        for token in RAW_NUMBERS:
            for tool, template in (
                ("autology_update", '{"id": "%s", "confidence": %s}' % (a, "{}")),
                ("autology_relate", '{"source": "%s", "target": "%s", "type": "uses", "confidence": %s}' % (a, b, "{}")),
                ("autology_query", '{"limit": %s}' % "{}"),
                ("autology_graph", '{"operation": "neighbours", "id": "%s", "depth": %s}' % (a, "{}")),
            ):
                arguments = template.replace("{}", token)
                raw = '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", "arguments": %s}}'
                with server._send_lock:
                    server._next_id += 1
                    request_id = server._next_id
                    server.proc.stdin.write((raw % (request_id, tool, arguments) + "\n").encode())
                result = tool_result(server.wait(request_id))
                tried += 1
                assert result.get("isError"), (tool, token, result_text(result))
                assert result_text(result).strip() and "Traceback" not in result_text(result)
                status = server.call_and_wait("autology_status", {})
                assert status["structuredContent"]["totalNodes"] == 2
    finally:
        server.close()
    assert tried == 20
    assert snapshot(root) == before
