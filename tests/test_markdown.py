"""Node <-> Markdown: the spec's file layout, hand-written files, and round-trip properties (hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.markdown import (
    MalformedNodeError,
    _yaml_dump,
    frontmatter_dict,
    parse_node,
    render_node,
    stand_in_id,
)
from autology_mcp.knowledge.models import (
    NODE_STATUSES,
    NODE_TYPES,
    RELATION_TYPES,
    KnowledgeNode,
    NodeStatus,
    NodeType,
    Relation,
    new_id,
    utc_now,
    validate_content,
    validate_tags,
    validate_title,
)
from autology_mcp.knowledge.rules import rule_breaks

T0 = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
PATH = ".autology/nodes/issues/my-note.md"


def make(**kw) -> KnowledgeNode:
    data = {"id": new_id(), "type": "concept", "title": "Title", "content": "Content.", "created": T0, "modified": T0}
    data.update(kw)
    return KnowledgeNode(**data)


def test_render_follows_the_spec_layout():
    target = new_id()
    node = make(
        type="decision",
        title="Node Title",
        tags=("tag1", "tag2"),
        session="session-id",
        relations=(Relation(type="affects", target=target, description="Description", confidence=0.85),),
        references=("path/to/file.ts",),
    )
    text = render_node(node)
    assert text.startswith("---\nid: ")
    front, body = text[4:].split("\n---\n", 1)
    keys = [line.split(":")[0] for line in front.splitlines() if line and not line.startswith((" ", "- "))]
    assert keys == [
        "id", "type", "title", "tags", "confidence", "created", "modified",
        "session", "source", "status", "relations", "references",
        "aliases",  # issue 14: Obsidian finds the node by its title
    ]  # fmt: skip
    assert "created: 2026-02-08T12:00:00Z\n" in front  # a plain ISO 8601 scalar, as in the spec
    assert "tags:\n- tag1\n- tag2\n" in front
    assert body == f"\n# Node Title\n\nContent.\n\n## Related\n- [[{target}]]\n"  # no title known: the bare id
    assert f"- [[{target}|Target (v2) / old]]\n" in render_node(node, {target: "Target [v2] | old"})  # brackets, pipes made safe
    meta = yaml.safe_load(front)
    assert meta["relations"] == [{"type": "affects", "target": target, "description": "Description", "confidence": 0.85}]
    assert parse_node(text) == node


def test_render_without_relations_has_no_related_section():
    text = render_node(make())
    assert "## Related" not in text
    assert text.endswith("# Title\n\nContent.\n")


# ------------------------------------------------------------------------------ round trip properties

YAML_SPECIAL = [
    ":", ": ", "#", " #", "-", "- ", "---", "...", "'", '"', "{", "}", "[", "]", ",", "&", "*", "!", "|", ">",
    "%", "@", "`", "?", "\\", "null", "true", "no", "~", "0x1F", "1e3", "1_000", "2026-02-08", "12:30",
]  # fmt: skip

text_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
title_text = st.lists(st.one_of(st.sampled_from(YAML_SPECIAL), st.text(text_chars, max_size=8)), max_size=10).map(
    "".join
)
content_lines = st.one_of(
    st.sampled_from(
        [
            "---",
            "----",
            "--- ",
            "...",
            "id: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f",
            "title: fake",
            "type: decision",
            "# Title",
            "## Related",
            "- [[not-a-node]]",
            "",
            "    indented code",
            "\tcode with tab",
            "* bullet",
            "> quote",
            "```yaml",
        ]
    ),
    st.text(text_chars, max_size=30),
)
content_text = st.lists(content_lines, min_size=1, max_size=12).map("\n".join)


def valid(fn, value):
    try:
        return fn(value)
    except ValidationError:
        assume(False)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(
    title=title_text,
    content=content_text,
    node_type=st.sampled_from(NODE_TYPES),
    status=st.sampled_from(NODE_STATUSES),
    tags=st.lists(st.from_regex(r"[a-z0-9]{1,6}(-[a-z0-9]{1,4})?", fullmatch=True), max_size=4),
    confidence=st.floats(0, 1).map(lambda x: round(x, 4)),
    relations=st.lists(st.tuples(st.sampled_from(RELATION_TYPES), st.text(text_chars, max_size=20)), max_size=3),
)
def test_round_trip(title, content, node_type, status, tags, confidence, relations):
    title = valid(validate_title, title)
    content = valid(validate_content, content)
    rels = []
    for rel_type, description in relations:
        description = " ".join(description.split()) or None
        if description and any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029\ufeff" for c in description):
            description = None
        rels.append(Relation(type=rel_type, target=new_id(), description=description, confidence=0.8))
    now = utc_now()
    node = KnowledgeNode(
        id=new_id(),
        type=node_type,
        title=title,
        content=content,
        tags=validate_tags(tags),
        relations=tuple(rels),
        confidence=confidence,
        created=now,
        modified=now,
        status=status,
        references=("src/a.py#L1-2",),
    )
    text = render_node(node)
    again = parse_node(text)
    assert again == node
    assert render_node(again) == text  # stable: a second write changes nothing
    # the relations list put together from cached items is what yaml.dump of the whole frontmatter writes
    assert text.startswith("---\n" + _yaml_dump(frontmatter_dict(node)) + "---\n")


LINE_BREAKS = ["\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
FRONTMATTER_LINES = [
    "---", "...", "id: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "type: decision", "title: fake", "status: superseded",
    "relations:", "- type: uses", "  target: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "tags: [evil]", "# Heading", "",
]  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    lines=st.lists(st.one_of(st.sampled_from(FRONTMATTER_LINES), st.text(text_chars, max_size=12)), min_size=1, max_size=6),
    breaks=st.lists(st.sampled_from(LINE_BREAKS), min_size=5, max_size=5),
)
def test_a_title_never_injects_frontmatter(lines, breaks):
    """Issue 29: whatever line breaks a title holds, it is one line, and the file's frontmatter has the
    node's keys and values only (the id, the type, the status are the node's)."""
    raw = "".join(line + breaks[i % len(breaks)] for i, line in enumerate(lines))
    title = valid(validate_title, raw)
    assert len(title.splitlines()) == 1 and title == title.strip()
    node = make(title=title)
    text = render_node(node)
    front = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
    assert list(front) == list(frontmatter_dict(node))
    assert (front["id"], front["type"], front["title"], front["status"]) == (node.id, "concept", title, "active")
    assert (front["tags"], front["relations"], front["aliases"]) == ([], [], [title])
    assert parse_node(text) == node


@pytest.mark.parametrize(
    "title",
    ["null", "true", "no", "123", "1.5", "1_000", "2026-02-08", "- item", "key: value", "# heading", "'quoted'",
     '"double"', "[list]", "{map}", "a #comment", "emoji 🚀 ünïcödé 漢字", "---", "..."],
)  # fmt: skip
def test_yaml_special_titles_round_trip(title):
    node = make(title=title)
    assert parse_node(render_node(node)).title == title


@pytest.mark.parametrize(
    "content",
    [
        "---\nid: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f\ntype: decision\ntitle: Fake\n---\nbody",
        "before\n---\nafter\n---\nend",
        "# Title\nthe content repeats the title heading",
        "## Related\n- [[3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f]]\n\nand text after it",
        "    leading indentation survives",
    ],
)
def test_content_that_looks_like_frontmatter_round_trips(content):
    node = make(content=content)
    assert parse_node(render_node(node)).content == content


def test_content_ending_with_a_hand_written_related_list_is_not_lost():
    """A 'Related' list the author wrote (not generated from relations) is content, and must survive."""
    other = new_id()
    content = f"Notes.\n\n## Related\n- [[{other}]]"
    node = make(content=content)
    assert parse_node(render_node(node)).content == content
    # ... also next to generated relations
    target = new_id()
    node = make(content=content, relations=(Relation(type="uses", target=target),))
    assert parse_node(render_node(node)).content == content


# ------------------------------------------------------------------------------ hand-written files


def test_minimal_hand_written_file_gets_defaults():
    node_id = new_id()
    text = f"---\nid: {node_id}\ntype: pattern\ntitle: Retry with backoff\nmodified: 2026-01-02T03:04:05Z\n---\nBody text\n"
    node = parse_node(text)
    assert node.id == node_id
    assert node.content == "Body text"
    assert node.status.value == "active"
    assert node.source == "manual"
    assert node.confidence == 0.9
    assert node.created == node.modified == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_hand_written_tags_are_normalised_and_unknown_keys_kept():
    text = (
        f"---\nid: {new_id()}\ntype: concept\ntitle: T\nmodified: 2026-01-02T03:04:05Z\n"
        "tags: 'Auth, #API Design'\naliases: [one, two]\ncssclass: wide\n---\nx\n"
    )
    node = parse_node(text)
    assert node.tags == ("auth", "api", "design")
    assert node.extra == {"aliases": ["one", "two"], "cssclass": "wide"}
    rendered = render_node(node)
    assert "aliases:\n- T\n- one\n- two\n" in rendered  # the title first, then the person's own
    assert parse_node(rendered).extra == node.extra


def test_windows_newlines_and_bom():
    node = make(content="a\nb")
    text = "\ufeff" + render_node(node).replace("\n", "\r\n")
    assert parse_node(text) == node


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no frontmatter here\n", "no YAML frontmatter"),
        ("---\nid: [unclosed\n---\nx\n", "invalid YAML frontmatter"),
        ("---\n---\nbody\n", "empty or unterminated"),
        ("---\ntitle: x\ntype: concept\n---\n", "missing required field 'id'"),
        ("---\nid: not-a-uuid\ntype: concept\ntitle: x\nmodified: 2026-01-01T00:00:00Z\n---\n", "UUID v4"),
        (f"---\nid: {new_id()}\ntype: concept\ntitle: x\n---\n", "modified"),
        (f"---\nid: {new_id()}\ntype: concept\ntitle: x\nmodified: soon\n---\n", "ISO 8601"),
    ],
)
def test_malformed_files_raise_with_a_reason(text, reason):
    """No node: no front matter, YAML that does not parse; without a path to derive an id from or a
    file time to stand in for a date (the merge driver's three texts), a missing or bad id or date too."""
    with pytest.raises(MalformedNodeError) as info:
        parse_node(text)
    assert reason in info.value.reason


HEAD = "---\nid: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f\ntype: concept\ntitle: x\nmodified: 2026-01-01T00:00:00Z\n"


@pytest.mark.parametrize(
    ("text", "field", "stand_in", "written"),
    [
        (HEAD.replace("type: concept", "type: thing"), "type", NodeType.ISSUE, "thing"),  # the folder's type
        (HEAD.replace("type: concept", "type: Decisions"), "type", NodeType.DECISION, "Decisions"),
        (HEAD.replace("type: concept\n", ""), "type", NodeType.ISSUE, None),  # the folder's type
        (HEAD + "relations: x\n", "relations", (), ["x"]),
        (HEAD + "relations:\n- type: uses\n  target: nope\n", "relations", (), [{"type": "uses", "target": "nope"}]),
        (HEAD + "references:\n- ../../etc/passwd\n- src/a.py\n", "references", ("src/a.py",), ["../../etc/passwd"]),
        (HEAD + "confidence: 7\n", "confidence", 0.9, 7),
        (HEAD + "status: draft\n", "status", NodeStatus.ACTIVE, "draft"),
        (HEAD + "created: last tuesday\n", "created", datetime(2026, 1, 1, tzinfo=UTC), "last tuesday"),
        (HEAD + "source: obsidian\n", "source", "manual", "obsidian"),
        (HEAD + "session: a b\n", "session", None, "a b"),
        (HEAD + "tags: {a: 1}\n", "tags", (), {"a": 1}),
        (HEAD.replace("id: 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "id: not-a-uuid"), "id", stand_in_id(PATH), "not-a-uuid"),
        (HEAD.replace("title: x\n", ""), "title", "my note", None),
    ],
)
def test_a_file_that_breaks_a_write_rule_is_read_with_a_stand_in_and_written_back_as_written(text, field, stand_in, written):
    node = parse_node(text + "---\nBody.\n", path=PATH)
    assert getattr(node, field) == stand_in and node.as_written == {field: written}
    assert [b.field for b in rule_breaks(node)] == [field]
    again = parse_node(render_node(node), path=PATH)
    assert again == (node if written is not None else node.replace(as_written={}))  # a missing field is filled


def test_a_long_title_is_kept_whole():
    node = parse_node(HEAD.replace("title: x", "title: " + "t" * 150) + "---\nBody.\n")
    assert node.title == "t" * 150 and node.as_written == {}
    assert [b.text() for b in rule_breaks(node)] == [
        f"title is 150 characters; the tools write at most 100: shorten it, or `autology update {node.id} --title ...`"]
    assert parse_node(render_node(node)) == node


@settings(max_examples=int(__import__("os").environ.get("HAND_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    order=st.permutations(["id", "type", "title", "tags", "status", "modified", "relations", "note"]),
    flow=st.booleans(),
    title=title_text,
    # (no NEL: PyYAML itself dumps it raw in a quoted scalar and loads it back as a space)
    note=st.one_of(
        st.none(),
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x85"), max_size=20),
        st.lists(st.integers(), max_size=3),
    ),
    tags=st.lists(st.text("ABCabc -#_1", min_size=1, max_size=6), max_size=3),
)
def test_hand_written_frontmatter_in_any_style_reads_back_the_same_after_a_rewrite(order, flow, title, note, tags):
    """Key order, flow or block style, quoting: whatever a person wrote, parse -> render -> parse is stable."""
    title = valid(validate_title, title)
    values = {
        "id": new_id(),
        "type": "pattern",
        "title": title,
        "tags": tags,
        "status": "needs_review",
        "modified": "2026-03-04T05:06:07.890Z",
        "relations": [{"target": new_id(), "type": "uses"}],
        "note": note,
    }
    front = yaml.safe_dump({k: values[k] for k in order}, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    text = f"---\n{front}---\nHand-written body.\n"
    first = parse_node(text)
    assert first.title == title
    assert first.extra == {"note": note}
    again = parse_node(render_node(first))
    assert again == first
