"""The spec's validation rules, one field at a time (autology_mcp.knowledge.models)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from autology_mcp.common.errors import NotFoundError, StorageError, ValidationError
from autology_mcp.knowledge.models import (
    NODE_STATUSES,
    NODE_TYPES,
    RELATION_TYPES,
    KnowledgeNode,
    build_relation,
    format_timestamp,
    new_id,
    parse_timestamp,
    title_has_line_break,
    utc_now,
    validate_confidence,
    validate_content,
    validate_id,
    validate_reference,
    validate_references,
    validate_relation_type,
    validate_session,
    validate_source,
    validate_status,
    validate_tags,
    validate_title,
    validate_type,
)


def test_the_spec_enumerations():
    assert NODE_TYPES == ["decision", "component", "convention", "concept", "pattern", "issue", "session"]
    assert NODE_STATUSES == ["active", "needs_review", "superseded"]
    assert RELATION_TYPES == ["affects", "uses", "supersedes", "relates_to", "implements", "depends_on", "derived_from"]


def test_new_ids_are_uuid4():
    for _ in range(20):
        value = new_id()
        assert uuid.UUID(value).version == 4
        assert validate_id(value) == value


@pytest.mark.parametrize(
    "bad",
    [
        "../../etc/passwd",
        "",
        "x",
        str(uuid.uuid1()),  # a UUID, but version 1
        "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f/../x",
        "3f2b8c1e9d4a4e5b8c7d1a2b3c4d5e6f",
        "3f2b8c1e-9d4a-4e5b-cc7d-1a2b3c4d5e6f",  # wrong variant
    ],
)
def test_ids_that_are_not_uuid4_are_refused(bad):
    with pytest.raises(ValidationError) as info:
        validate_id(bad)
    assert info.value.field == "id"
    assert "UUID v4" in str(info.value)


def test_id_must_be_a_string_and_is_normalised():
    with pytest.raises(ValidationError, match="got int"):
        validate_id(42)
    upper = str(uuid.uuid4()).upper()
    assert validate_id(upper) == upper.lower()
    with pytest.raises(ValidationError) as info:
        validate_id("nope", "source")
    assert info.value.field == "source"


def test_title_rules():
    assert validate_title("  Use   SQLite\nFTS5  ") == "Use SQLite FTS5"
    assert validate_title("x" * 100) == "x" * 100
    with pytest.raises(ValidationError, match="101 characters"):
        validate_title("x" * 101)
    with pytest.raises(ValidationError, match="must not be empty"):
        validate_title("   ")
    with pytest.raises(ValidationError, match="must be a string"):
        validate_title(None)
    with pytest.raises(ValidationError, match="control"):
        validate_title("bell\x07")


@pytest.mark.parametrize(
    "raw", ["Evil\n---\nid: evil\n---", "a\r\nb", "a\rb", "a\u2028b", "a\u2029b", "a\x85b", "a\x0bb", "a\x0cb", "a\n\n b"]
)
def test_a_title_with_a_line_break_inside_is_told_apart(raw):
    """Issue 29: the line break is joined away by validate_title; the caller is told (service.capture, update)."""
    assert title_has_line_break(raw)
    assert "\n" not in validate_title(raw) and len(validate_title(raw).splitlines()) == 1


@pytest.mark.parametrize("raw", ["One line", "  padded\n", "\nleading", "trailing\r\n", "tabs\tand   spaces", 42, None])
def test_a_title_without_a_line_break_inside_is_not_flagged(raw):
    assert not title_has_line_break(raw)


@pytest.mark.parametrize(
    ("validate", "value", "words"),
    [
        (lambda v: validate_tags([v]), "auth\n", "try 'auth'"),
        (lambda v: validate_tags([v]), "auth\nid", "try 'auth-id'"),
        (validate_session, "s-42\n", "identifier"),
        (validate_source, "manual\n", "manual"),
        (validate_reference, "src/a.py\nid: evil", "not a file path"),
        (validate_reference, "src/a.py\r\nid: evil", "not a file path"),
    ],
)
def test_single_line_frontmatter_fields_refuse_a_line_break(validate, value, words):
    """Issue 29: ``$`` matches before a final newline, so 'auth\\n' passed as a tag and a reference could
    hold a line break: every single-line field of the frontmatter is matched whole."""
    with pytest.raises(ValidationError, match=re.escape(words)):
        validate(value)


def test_content_rules():
    assert validate_content("line one   \r\nline two\r\n\n") == "line one\nline two"
    assert validate_content("    indented code\n") == "    indented code"
    with pytest.raises(ValidationError, match="must not be empty"):
        validate_content(" \n\t\n")
    with pytest.raises(ValidationError, match="control character"):
        validate_content("nul \x00 byte")
    with pytest.raises(ValidationError, match="limit"):
        validate_content("x" * 200_001)
    with pytest.raises(ValidationError, match="string of Markdown"):
        validate_content(["a"])


@pytest.mark.parametrize("value", NODE_TYPES)
def test_every_type_is_accepted(value):
    assert validate_type(value).value == value


def test_unknown_enums_name_the_allowed_values():
    with pytest.raises(ValidationError) as info:
        validate_type("decisions")
    assert info.value.allowed == NODE_TYPES
    assert "allowed: decision, component" in str(info.value)
    with pytest.raises(ValidationError, match="allowed: active, needs_review, superseded"):
        validate_status("done")
    with pytest.raises(ValidationError, match="relates_to"):
        validate_relation_type("related")
    assert validate_status("superseded").value == "superseded"


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0, 0.123456])
def test_confidence_in_range(value):
    assert 0.0 <= validate_confidence(value) <= 1.0


@pytest.mark.parametrize("value", [-0.01, 1.01, float("nan"), float("inf"), "0.9", True, None])
def test_confidence_out_of_range_or_wrong_type(value):
    with pytest.raises(ValidationError) as info:
        validate_confidence(value)
    assert info.value.field == "confidence"


def test_confidence_minimum():
    assert validate_confidence(0.5, minimum=0.5) == 0.5
    with pytest.raises(ValidationError, match="below the minimum"):
        validate_confidence(0.49, minimum=0.5)


def test_tags_rules():
    assert validate_tags(None) == ()
    assert validate_tags(["auth", "api-design", "v2", "auth"]) == ("auth", "api-design", "v2")
    with pytest.raises(ValidationError, match="try 'api-design'"):
        validate_tags(["API Design"])
    for bad in (["-x"], ["x-"], ["a--b"], ["snake_case"], [""], ["é"], [1], "auth", ["x" * 65]):
        with pytest.raises(ValidationError) as info:
            validate_tags(bad)
        assert info.value.field == "tags"
    with pytest.raises(ValidationError, match="limit is 32"):
        validate_tags([f"t{i}" for i in range(33)])


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src/app.py", "src/app.py"),
        ("src\\app.py", "src/app.py"),
        ("src/app.py#L10-40", "src/app.py#L10-40"),
        ("src/app.py#L10", "src/app.py#L10"),
        ("src/app.py#Store.get", "src/app.py#Store.get"),
        ("~/notes.md", "~/notes.md"),  # a folder literally named '~' inside the project
    ],
)
def test_valid_references(given, expected):
    assert validate_reference(given) == expected


@pytest.mark.parametrize(
    "bad",
    [
        "../secrets.txt",
        "src/../../etc/passwd",
        "/etc/passwd",
        "C:/Windows/win.ini",
        "..\\..\\x",
        "src//app.py",
        "src/./app.py",
        "",
        "app.py#../../x",
        "nul\x00.py",
    ],
)
def test_references_that_escape_the_root_are_refused(bad):
    with pytest.raises(ValidationError) as info:
        validate_reference(bad)
    assert info.value.field == "references"


def test_references_list():
    assert validate_references(["a.py", "./a.py", "b.py"]) == ("a.py", "b.py")
    with pytest.raises(ValidationError, match="list of file paths"):
        validate_references("a.py")


def test_source_and_session():
    assert validate_source("manual") == "manual"
    assert validate_source("hook_post_commit") == "hook_post_commit"
    for bad in ("hook", "Manual", "hook-x", "", None):
        with pytest.raises(ValidationError, match="source"):
            validate_source(bad)
    assert validate_session(None) is None
    assert validate_session("2026-02-08:abc") == "2026-02-08:abc"
    with pytest.raises(ValidationError, match="session"):
        validate_session("has space")


def test_relation_defaults_and_validation():
    target = new_id()
    relation = build_relation(target, "uses")
    assert relation.confidence == 0.8
    assert relation.description is None
    assert build_relation(target, "uses", "  why\n it  matters ", 0.3).description == "why it matters"
    with pytest.raises(ValidationError, match="target"):
        build_relation("../x", "uses")
    with pytest.raises(ValidationError, match="unknown relation type"):
        build_relation(target, "likes")
    with pytest.raises(ValidationError, match="limit is 500"):
        build_relation(target, "uses", "x" * 501)


def test_timestamps_are_iso8601_utc():
    now = utc_now()
    assert now.microsecond % 1000 == 0
    text = format_timestamp(now)
    assert text.endswith("Z")
    assert parse_timestamp(text, "modified") == now
    assert format_timestamp(datetime(2026, 2, 8, 12, 0, tzinfo=UTC)) == "2026-02-08T12:00:00Z"
    plus_two = datetime(2026, 2, 8, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(plus_two) == "2026-02-08T12:00:00Z"
    assert parse_timestamp("2026-02-08T12:00:00", "created").tzinfo is not None
    with pytest.raises(ValidationError, match="ISO 8601"):
        parse_timestamp("yesterday", "created")


def test_nodes_are_immutable():
    now = utc_now()
    node = KnowledgeNode(id=new_id(), type="concept", title="t", content="c", created=now, modified=now)
    with pytest.raises(Exception):
        node.title = "changed"  # type: ignore[misc]
    assert node.public_dict()["created"].endswith("Z")
    assert "extra" not in node.public_dict()


def test_error_messages_name_what_is_wrong():
    assert str(NotFoundError("abc")) == "Node not found: abc"
    assert str(NotFoundError("abc", "target node")) == "Target node not found: abc"
    assert str(StorageError("/x", "permission denied")) == "Storage error at /x: permission denied"
    err = ValidationError("type", "unknown node type 'x'", ["a", "b"])
    assert str(err) == "Invalid type: unknown node type 'x' (allowed: a, b)"
