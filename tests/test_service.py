"""The seven operations on the domain core (autology_mcp.knowledge.service.Autology), against real files.

Capture classification and confidence, partial update, delete with relation clean-up both ways,
relate upsert, unrelate of a missing relation, status counts; bad ids and references never touch
the file system; graph/index.json equals the relations in the files after every operation.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
import yaml
from core_helpers import (
    ADR,
    adr,
    assert_graph_index_matches_files,
    node_files,
    relations_in_files,
    snapshot,
    tree,
    write_node_file,
)

from autology_mcp.common.errors import NotFoundError, ValidationError
from autology_mcp.knowledge.markdown import parse_node
from autology_mcp.knowledge.models import format_timestamp, new_id


def file_of(root, node_type, node_id):
    return root / ".autology" / "nodes" / f"{node_type}s" / f"{node_id}.md"


# ------------------------------------------------------------------------------ capture


def test_capture_with_type_is_manual_confidence_09(autology, root):
    result = autology.capture("Use FTS5", adr(), type="decision", tags=["search"], references=["autology_mcp/knowledge/search.py"])
    assert (result.type, result.confidence) == ("decision", 0.9)
    node = parse_node(file_of(root, "decision", result.id).read_text())
    assert node.source == "manual" and node.confidence == 0.9
    assert node.tags == ("search",)
    assert node.references == ("autology_mcp/knowledge/search.py",)
    assert node.created == node.modified
    assert node.status.value == "active"


def test_capture_from_a_hook_with_type_is_085(autology):
    result = autology.capture("Session summary", "We worked on search.", type="session", source="hook_session_end")
    assert result.confidence == 0.85


def test_capture_without_type_is_classified_at_07(autology, root):
    result = autology.capture(
        "Login fails with a timeout error", "Known bug: the login endpoint fails when the database is slow."
    )
    assert (result.type, result.confidence) == ("issue", 0.7)
    assert file_of(root, "issue", result.id).is_file()


def test_capture_classifies_an_adr_as_a_decision(autology):
    result = autology.capture("Search engine", ADR)
    assert (result.type, result.confidence) == ("decision", 0.7)


@pytest.mark.parametrize(
    ("title", "content", "expected"),
    [
        ("Payment service", "The payment service module exposes the billing API endpoints.", "component"),
        ("Naming convention", "Always use snake_case for module names; never abbreviate.", "convention"),
        ("What is a tenant", "In our domain a tenant means one paying organisation.", "concept"),
        ("Retry pattern", "A reusable retry with exponential backoff approach.", "pattern"),
        ("Today's session", "In this session we worked on search; next steps: ranking.", "session"),
    ],
)
def test_classification_of_each_type(autology, title, content, expected):
    assert autology.capture(title, content).type == expected


def test_a_classified_decision_still_needs_all_four_sections(autology, root):
    three = ADR.split("## Consequences")[0]
    before = snapshot(root)
    with pytest.raises(ValidationError, match=r"missing section\(s\): Consequences") as info:
        autology.capture("Search engine choice", three)
    assert "## Consequences" in str(info.value)
    assert snapshot(root) == before


def test_a_stated_decision_without_its_sections_is_refused_with_the_template(autology, root):
    """Issue 16: text that reads as a decision keeps the helpful refusal, whatever else its title names."""
    before = snapshot(root)
    for title, content in [
        ("Client timeout default", "We decided that all clients default to Timeout(timeout=5.0)."),
        ("Pick", "We decided on the module layout."),
    ]:
        with pytest.raises(ValidationError, match=r"must be written as an ADR") as info:
            autology.capture(title, content)
        assert "## Context" in str(info.value) and "## Consequences" in str(info.value)
    assert snapshot(root) == before


def test_a_hook_capture_without_type_is_an_automatic_inference(autology):
    result = autology.capture("Flaky upload test", "Bug: the upload test fails intermittently.", source="hook_pre_compact")
    assert (result.type, result.confidence) == ("issue", 0.7)


def test_an_unclear_capture_is_stored_as_a_concept_for_review(autology, root):
    """Issue 16: a capture without a type always succeeds; an unsure classification falls back to the
    best type (concept when nothing matched) at confidence 0.7, status needs_review, and says so."""
    result = autology.capture("Misc", "Some text.")
    assert (result.type, result.confidence) == ("concept", 0.7)
    assert len(result.warnings) == 1 and "status needs_review" in result.warnings[0]
    assert autology.get(result.id).status == "needs_review"
    assert file_of(root, "concept", result.id).is_file()
    tied = autology.capture("Pick", "The module has a bug.")  # component 1, issue 1: a tie
    assert tied.type == "concept" and autology.get(tied.id).status == "needs_review"
    chosen = autology.capture("Notes", "Some text.", status="active")  # an explicit status is kept
    assert autology.get(chosen.id).status == "active" and chosen.warnings


def test_a_clear_capture_has_no_warnings(autology, root):
    (root / "src").mkdir()
    (root / "src" / "login.py").write_text("x = 1\n")
    result = autology.capture(
        "Login fails with a timeout error", "Known bug: the login endpoint fails.", references=["src/login.py#L1"])
    assert (result.type, result.warnings) == ("issue", [])


def test_missing_references_and_duplicate_titles_are_accepted_with_warnings(autology):
    first = autology.capture("Retry policy", "Retry three times.", type="convention", references=["src/gone.py#L3-9"])
    assert first.warnings == [f"reference 'src/gone.py#L3-9': no such file or folder under the project root "
                              f"{str(autology.store.root)!r}"]
    second = autology.capture("retry POLICY", "Retry with backoff.", type="pattern")
    assert len(second.warnings) == 1 and first.id in second.warnings[0]
    message = autology.update(second.id, title="Backoff policy")
    assert "Warning" not in message
    message = autology.update(second.id, title="Retry policy", references=["docs/none.md"])
    assert "\nWarning: another node already has this title" in message and "\nWarning: reference 'docs/none.md'" in message


EVIL_TITLE = "Evil\n---\nid: evil\n---"


def front_matter(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text[4:].split("\n---\n", 1)[0])


def test_a_title_with_line_breaks_is_stored_on_one_line_and_the_warning_shows_it(autology, root):
    """Issue 29: such a title was stored joined ('Evil --- id: evil ---') with no word to the caller."""
    result = autology.capture(EVIL_TITLE, "Body.", type="concept")
    stored = "Evil --- id: evil ---"
    assert len(result.warnings) == 1, result.warnings
    assert "line break" in result.warnings[0] and f"stored as {stored!r}" in result.warnings[0]
    front = front_matter(file_of(root, "concept", result.id))
    assert (front["id"], front["title"]) == (result.id, stored)  # nothing injected into the frontmatter
    assert autology.get(result.id).title == stored

    message = autology.update(result.id, title="Better\r\ntitle")
    assert message.startswith("✓ Updated: Better title (concept)\nFields changed: title\nWarning: ")
    assert "line break" in message and "stored as 'Better title'" in message
    assert front_matter(file_of(root, "concept", result.id))["title"] == "Better title"

    # padding, a final newline and runs of spaces are not line breaks inside the title: no warning
    assert autology.capture("  Plain   title\n", "Body.", type="concept").warnings == []
    assert "Warning" not in autology.update(result.id, title="Best title\n")


def test_an_adr_section_inside_fenced_code_does_not_count(autology, root):
    """Issue 29: a `## Consequences` (or a bold label) quoted in a fenced block is code, not the section."""
    content = ("## Context\n\nWhy.\n\n## Decision\n\nWhat.\n\n## Alternatives\n\nOthers.\n\nA record looks like:\n\n"
               "~~~markdown\n## Consequences\n**Consequences**: none\n~~~\n")
    before = snapshot(root)
    with pytest.raises(ValidationError, match=r"missing section\(s\): Consequences\."):
        autology.capture("Use make", content, type="decision")
    assert snapshot(root) == before
    done = autology.capture("Use make", content + "\n## Consequences\n\nFaster builds.", type="decision")
    assert done.type == "decision"


def test_capture_refuses_a_confidence_below_the_minimum(autology, root):
    before = snapshot(root)
    with pytest.raises(ValidationError, match="below the minimum accepted confidence 0.5"):
        autology.capture("Low", "x", type="concept", confidence=0.4)
    assert snapshot(root) == before
    assert autology.capture("Ok", "x", type="concept", confidence=0.5).confidence == 0.5


def test_a_decision_needs_the_four_adr_sections(autology, root):
    before = snapshot(root)
    with pytest.raises(ValidationError) as info:
        autology.capture("Use Postgres", "## Context\nWe need a DB.\n\n## Decision\nPostgres.", type="decision")
    message = str(info.value)
    assert "missing section(s): Alternatives, Consequences" in message
    for heading in ("## Context", "## Decision", "## Alternatives", "## Consequences"):
        assert heading in message  # the template
    assert snapshot(root) == before


def test_adr_sections_may_be_bold_labels_or_numbered_headings(autology):
    content = "**Context**: a.\n\n### 2. Decision\nb.\n\n## Options considered\nc.\n\n**Consequences**: d."
    assert autology.capture("Decided", content, type="decision").type == "decision"


def test_capture_validates_every_field_before_writing(autology, root):
    before = snapshot(root)
    bad_inputs = [
        dict(title="", content="x", type="concept"),
        dict(title="x" * 101, content="x", type="concept"),
        dict(title="t", content="", type="concept"),
        dict(title="t", content="x", type="thing"),
        dict(title="t", content="x", type="concept", tags=["Not OK"]),
        dict(title="t", content="x", type="concept", references=["../outside.py"]),
        dict(title="t", content="x", type="concept", references=["/etc/passwd"]),
        dict(title="t", content="x", type="concept", source="robot"),
        dict(title="t", content="x", type="concept", status="done"),
        dict(title="t", content="x", type="concept", session="has spaces"),
    ]
    for kwargs in bad_inputs:
        with pytest.raises(ValidationError):
            autology.capture(**kwargs)
    assert snapshot(root) == before
    assert autology.status().totalNodes == 0


# ------------------------------------------------------------------------------ update


def test_update_is_partial_and_bumps_modified(autology, root):
    node_id, path = write_node_file(
        root, "concept", title="Caching", body="Use an LRU cache.", extra_frontmatter="tags:\n- perf\nreferences:\n- src/cache.py\n"
    )
    autology.store.reconcile()
    before = parse_node(path.read_text())
    assert before.modified == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    message = autology.update(node_id, title="Caching strategy", status="needs_review")
    assert message == "✓ Updated: Caching strategy (concept)\nFields changed: title, status"
    after = parse_node(path.read_text())
    assert after.title == "Caching strategy"
    assert after.status.value == "needs_review"
    assert (after.content, after.tags, after.references, after.confidence, after.created) == (
        before.content,
        before.tags,
        before.references,
        before.confidence,
        before.created,
    )
    assert after.modified > before.modified
    assert abs((after.modified - datetime.now(UTC)).total_seconds()) < 3600
    assert autology.get(node_id).title == "Caching strategy"
    assert autology.get(node_id).modified == format_timestamp(after.modified)


def test_update_every_field(autology, root, capture):
    node_id = capture()
    message = autology.update(
        node_id, title="T2", content="C2", tags=["a", "b"], status="superseded", confidence=0.6, references=["x.py"]
    )
    assert "Fields changed: title, content, tags, status, confidence, references\n" in message
    assert message.endswith("Warning: reference 'x.py': no such file or folder under the project root "
                            f"{str(autology.store.root)!r}")
    node = autology.get(node_id)
    assert (node.title, node.content, node.tags, node.status, node.confidence, node.references) == (
        "T2", "C2", ["a", "b"], "superseded", 0.6, ["x.py"],
    )  # fmt: skip


def test_update_with_no_fields_is_an_error(autology, root, capture):
    node_id = capture()
    before = snapshot(root)
    with pytest.raises(ValidationError, match="no fields to update"):
        autology.update(node_id)
    assert snapshot(root) == before


def test_update_with_the_current_values_changes_nothing(autology, root, capture):
    node_id = capture("Same")
    before = snapshot(root)
    assert autology.update(node_id, title="Same").endswith("Fields changed: none (the values were already current)")
    assert snapshot(root) == before


def test_content_edited_from_a_shown_node_keeps_one_related_list(autology, root, capture):
    """`autology show` prints the file with its generated ``## Related`` list; content edited from it
    and given back to update must not end up with the list twice."""
    target = capture("Target concept")
    source = capture("Source concept", "First text.")
    autology.relate(source, target, "relates_to")
    path = root / ".autology" / "nodes" / "concepts" / f"{source}.md"
    shown = path.read_text(encoding="utf-8").split("\n---\n", 1)[1]  # the body, as show prints it
    assert "## Related" in shown
    edited = shown.replace("First text.", "Second text.").split("\n", 2)[2]  # without the "# Title" line
    assert autology.update(source, content=edited).endswith("Fields changed: content")
    text = path.read_text(encoding="utf-8")
    assert text.count("## Related") == 1 and autology.store.get(source).content == "Second text."
    # a "## Related" list of the author's own (links to nodes it is not related to) is content
    other = capture("Unrelated concept")
    own = f"Third text.\n\n## Related\n- [[{other}]]"
    autology.update(source, content=own)
    assert autology.store.get(source).content == own
    assert path.read_text(encoding="utf-8").count("## Related") == 2


def test_content_given_with_the_files_own_heading_keeps_one_heading(autology, root, capture):
    """A node's file body starts with the ``# Title`` line the format writes: content taken from the file
    whole (heading and all) and given to update or capture is stored without it, so the file holds the
    heading once. Another heading first, or the old title after a rename, is content."""
    node_id = capture("Indent with tabs", "First text.")
    path = root / ".autology" / "nodes" / "concepts" / f"{node_id}.md"
    body = path.read_text(encoding="utf-8").split("\n---\n", 1)[1]  # "\n# Indent with tabs\n\nFirst text.\n"
    autology.update(node_id, content=body.replace("First text.", "Second text."))
    assert autology.store.get(node_id).content == "Second text."
    assert path.read_text(encoding="utf-8").count("# Indent with tabs") == 1
    autology.update(node_id, title="Indent with spaces", content="# Indent with tabs\n\nThird text.")
    assert autology.store.get(node_id).content == "# Indent with tabs\n\nThird text."
    again = capture("Wrap at 100", "# Wrap at 100\n\nLines wrap at 100 characters.")
    assert autology.store.get(again).content == "Lines wrap at 100 characters."


def test_update_of_a_missing_node(autology, root):
    missing = new_id()
    with pytest.raises(NotFoundError, match=f"Node not found: {missing}"):
        autology.update(missing, title="x")


def test_update_bad_values_change_nothing(autology, root, capture):
    node_id = capture()
    decision = autology.capture("D", adr(), type="decision").id
    before = snapshot(root)
    for kwargs in (
        dict(title=""),
        dict(content="  "),
        dict(tags=["UPPER"]),
        dict(status="archived"),
        dict(confidence=1.5),
        dict(confidence=0.2),
        dict(references=["../../x"]),
    ):
        with pytest.raises(ValidationError):
            autology.update(node_id, **kwargs)
    with pytest.raises(ValidationError, match="missing section"):
        autology.update(decision, content="No sections at all.")
    assert snapshot(root) == before


# ------------------------------------------------------------------------------ relate / unrelate


def test_relate_creates_a_relation_in_the_source_file(autology, root, capture):
    a, b = capture("A"), capture("B")
    message = autology.relate(a, b, "uses", description="A calls B")
    assert message == f"✓ Related: {a} —[uses]→ {b}"
    node = parse_node(file_of(root, "concept", a).read_text())
    assert [(r.type.value, r.target, r.description, r.confidence) for r in node.relations] == [
        ("uses", b, "A calls B", 0.8)
    ]
    assert f"## Related\n- [[{b}|B]]\n" in file_of(root, "concept", a).read_text()  # the link shows the title
    assert parse_node(file_of(root, "concept", b).read_text()).relations == ()
    assert_graph_index_matches_files(root)


def test_relate_is_an_upsert(autology, root, capture):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses", description="first", confidence=0.6)
    autology.relate(a, b, "uses", description="second")
    assert relations_in_files(root) == {(a, b, "uses", "second", 0.6)}  # confidence kept when not given
    autology.relate(a, b, "uses", confidence=0.95)
    assert relations_in_files(root) == {(a, b, "uses", "second", 0.95)}  # description kept when not given
    autology.relate(a, b, "affects")
    assert relations_in_files(root) == {(a, b, "uses", "second", 0.95), (a, b, "affects", None, 0.8)}
    assert autology.status().totalRelations == 2
    assert_graph_index_matches_files(root)


def test_relate_errors(autology, root, capture):
    a, b = capture("A"), capture("B")
    missing = new_id()
    before = snapshot(root)
    with pytest.raises(NotFoundError, match=f"Target node not found: {missing}"):
        autology.relate(a, missing, "uses")
    with pytest.raises(NotFoundError, match=f"Source node not found: {missing}"):
        autology.relate(missing, b, "uses")
    with pytest.raises(ValidationError, match="related to itself"):
        autology.relate(a, a, "uses")
    with pytest.raises(ValidationError, match="unknown relation type"):
        autology.relate(a, b, "likes")
    with pytest.raises(ValidationError, match="confidence"):
        autology.relate(a, b, "uses", confidence=2)
    with pytest.raises(ValidationError, match="description"):
        autology.relate(a, b, "uses", description="x" * 501)
    assert snapshot(root) == before


def test_unrelate_removes_only_that_relation_and_leaves_the_nodes(autology, root, capture):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses")
    autology.relate(a, b, "affects")
    b_before = file_of(root, "concept", b).read_bytes()
    message = autology.unrelate(a, b, "uses")
    assert message == f"✓ Removed relation: {a} —[uses]→ {b}"
    assert relations_in_files(root) == {(a, b, "affects", None, 0.8)}
    node_a = autology.get(a)
    assert (node_a.title, node_a.content) == ("A", "Some domain knowledge.")
    assert file_of(root, "concept", b).read_bytes() == b_before
    assert_graph_index_matches_files(root)


def test_unrelate_of_a_missing_relation_does_not_fail(autology, root, capture):
    a, b = capture("A"), capture("B")
    before = snapshot(root)
    assert autology.unrelate(a, b, "uses").startswith(f"✓ Removed relation: {a} —[uses]→ {b}")
    assert autology.unrelate(new_id(), b, "uses").startswith("✓ Removed relation:")
    assert snapshot(root) == before
    with pytest.raises(ValidationError):
        autology.unrelate(a, b, "nope")


# ------------------------------------------------------------------------------ delete


def test_delete_removes_the_node_and_relations_both_ways(autology, root, capture):
    a, b, c, d = capture("A"), capture("B"), capture("C"), capture("D")
    autology.relate(a, b, "uses")
    autology.relate(c, b, "depends_on")
    autology.relate(c, a, "relates_to")
    autology.relate(b, d, "implements")
    message = autology.delete(b)
    assert message == "✓ Deleted: B (concept)\nRelations removed: 3"
    assert not file_of(root, "concept", b).exists()
    assert relations_in_files(root) == {(c, a, "relates_to", None, 0.8)}
    assert b not in file_of(root, "concept", a).read_text()  # also gone from the ## Related links
    assert b not in file_of(root, "concept", c).read_text()
    assert autology.status().totalNodes == 3
    with pytest.raises(NotFoundError):
        autology.get(b)
    assert b not in [h.node.id for h in autology.query(limit=100)]
    assert_graph_index_matches_files(root)


def test_delete_of_a_missing_node(autology, root, capture):
    capture()
    before = snapshot(root)
    missing = new_id()
    with pytest.raises(NotFoundError, match=missing):
        autology.delete(missing)
    assert snapshot(root) == before


# ------------------------------------------------------------------------------ the graph index after every operation


def test_graph_index_equals_the_files_after_every_operation(autology, root, capture):
    check = lambda: assert_graph_index_matches_files(root)  # noqa: E731
    a = capture("A")
    check()
    b = capture("B")
    autology.relate(a, b, "uses", description="d1")
    check()
    autology.relate(a, b, "uses", confidence=0.55)
    check()
    autology.relate(b, a, "derived_from")
    check()
    autology.update(a, title="A2", tags=["x"])
    check()
    autology.unrelate(a, b, "uses")
    check()
    autology.unrelate(a, b, "uses")
    check()
    c = capture("C")
    autology.relate(c, a, "supersedes")
    check()
    autology.delete(a)
    check()
    autology.store.rebuild()
    check()
    assert autology.status().totalRelations == 0


# ------------------------------------------------------------------------------ status


def test_status_counts(autology, capture):
    a = capture("A", type="component")
    b = capture("B", type="component")
    c = autology.capture("C", adr(), type="decision").id
    autology.update(b, status="superseded")
    autology.relate(c, a, "affects")
    autology.relate(a, b, "uses")
    autology.relate(b, a, "uses")
    status = autology.status()
    assert status.totalNodes == 3
    assert status.nodesByType == {
        "decision": 1, "component": 2, "convention": 0, "concept": 0, "pattern": 0, "issue": 0, "session": 0,
    }  # fmt: skip
    assert status.nodesByStatus == {"active": 2, "needs_review": 0, "superseded": 1}
    assert status.totalRelations == 3
    assert status.relationsByType["uses"] == 2 and status.relationsByType["affects"] == 1
    assert sum(status.relationsByType.values()) == 3


# ------------------------------------------------------------------------------ ids and paths from input


BAD_IDS = ["../../etc/passwd", "../nodes/concepts/x", "/etc/passwd", "a" * 36, "", "3f2b8c1e-9d4a-1e5b-8c7d-1a2b3c4d5e6f"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_ids_that_are_not_uuid4_never_touch_the_file_system(autology, root, capture, tmp_path, bad):
    a = capture("A")
    before_tree, before = tree(tmp_path), snapshot(root)
    calls = [
        lambda: autology.get(bad),
        lambda: autology.update(bad, title="x"),
        lambda: autology.delete(bad),
        lambda: autology.relate(bad, a, "uses"),
        lambda: autology.relate(a, bad, "uses"),
        lambda: autology.unrelate(bad, a, "uses"),
        lambda: autology.unrelate(a, bad, "uses"),
    ]
    for call in calls:
        with pytest.raises(ValidationError, match="UUID v4"):
            call()
    assert tree(tmp_path) == before_tree
    assert snapshot(root) == before


class _Untouchable:
    """Stands in for the store: any call into it fails the test."""

    def __getattr__(self, name):
        def used(*args, **kwargs):
            raise AssertionError(f"the store was used ({name}) before the id was validated")

        return used


@pytest.mark.parametrize("bad", BAD_IDS)
def test_ids_are_validated_before_the_store_is_used_at_all(autology, capture, monkeypatch, bad):
    a = capture("A")
    monkeypatch.setattr(autology, "store", _Untouchable())
    for call in (
        lambda: autology.get(bad),
        lambda: autology.update(bad, title="x"),
        lambda: autology.delete(bad),
        lambda: autology.relate(bad, a, "uses"),
        lambda: autology.relate(a, bad, "uses"),
        lambda: autology.unrelate(bad, a, "uses"),
        lambda: autology.unrelate(a, bad, "uses"),
    ):
        with pytest.raises(ValidationError, match="UUID v4"):
            call()


def test_references_that_escape_the_root_are_refused(autology, root, capture):
    node_id = capture()
    before = snapshot(root)
    for refs in (["../x.py"], ["src/../../x.py"], ["/abs/x.py"], ["C:\\x.py"], ["ok.py", "../../bad.py"]):
        with pytest.raises(ValidationError, match="inside the project"):
            autology.update(node_id, references=refs)
        with pytest.raises(ValidationError, match="inside the project"):
            autology.capture("t", "c", type="concept", references=refs)
    assert snapshot(root) == before


def test_node_files_are_only_written_at_their_spec_path(autology, root, capture):
    ids = [capture(f"N{i}", type=t) for i, t in enumerate(["concept", "issue", "pattern"])]
    files = node_files(root)
    assert len(files) == 3
    for path in files:
        assert re.fullmatch(r"\.autology/nodes/(concept|issue|pattern)s/[0-9a-f-]{36}\.md", path)
    assert {p.rsplit("/", 1)[1][:-3] for p in files} == set(ids)


# ------------------------------------------------------------------------------ stateful: any sequence of operations

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule  # noqa: E402


class StoreMachine(RuleBasedStateMachine):
    """Random sequences of the operations, outside edits and rebuilds, from two instances on one project,
    against a model of what the files must say."""

    nodes = Bundle("nodes")

    def __init__(self):
        super().__init__()
        import tempfile
        from pathlib import Path

        from autology_mcp.knowledge.service import Autology
        from autology_mcp.knowledge.store import NodeStore

        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        # two instances on one project, like two server processes: rules alternate between them
        self.instances = []
        for _ in range(2):
            store = NodeStore(self.root, durable=False)
            store.init()
            store.reconcile()
            self.instances.append(Autology(store))
        self.active = 0
        self.model_nodes: dict[str, str] = {}  # id -> title
        self.model_relations: set[tuple[str, str, str]] = set()

    @property
    def autology(self):
        return self.instances[self.active]

    def teardown(self):
        for instance in self.instances:
            instance.close()
        self._tmp.cleanup()

    @rule()
    def switch_instance(self):
        self.active = 1 - self.active

    @rule()
    def rebuild(self):
        self.autology.store.rebuild()

    @rule(target=nodes, title=st.sampled_from(["alpha", "beta", "gamma: delta", "ε — unicode", "---"]))
    def capture(self, title):
        node_id = self.autology.capture(title, f"content of {title}", type="concept").id
        self.model_nodes[node_id] = title
        return node_id

    @rule(src=nodes, dst=nodes, rel=st.sampled_from(["uses", "affects", "supersedes"]))
    def relate(self, src, dst, rel):
        source, target = src, dst
        if source == target:
            with pytest.raises(ValidationError):
                self.autology.relate(source, target, rel)
        elif source not in self.model_nodes or target not in self.model_nodes:
            with pytest.raises(NotFoundError):
                self.autology.relate(source, target, rel)
        else:
            self.autology.relate(source, target, rel)
            self.model_relations.add((source, target, rel))

    @rule(src=nodes, dst=nodes, rel=st.sampled_from(["uses", "affects", "supersedes"]))
    def unrelate(self, src, dst, rel):
        source, target = src, dst
        assert self.autology.unrelate(source, target, rel).startswith("✓ Removed relation")
        self.model_relations.discard((source, target, rel))

    @rule(node=nodes, title=st.sampled_from(["renamed", "other: name"]))
    def update(self, node, title):
        if node not in self.model_nodes:
            with pytest.raises(NotFoundError):
                self.autology.update(node, title=title)
        else:
            self.autology.update(node, title=title)
            self.model_nodes[node] = title

    @rule(node=nodes)
    def delete(self, node):
        if node not in self.model_nodes:
            with pytest.raises(NotFoundError):
                self.autology.delete(node)
            return
        removed = {r for r in self.model_relations if node in r[:2]}
        message = self.autology.delete(node)
        assert message.endswith(f"Relations removed: {len(removed)}")
        self.model_relations -= removed
        del self.model_nodes[node]

    @rule(node=nodes)
    def edit_by_hand(self, node):
        if node not in self.model_nodes:
            return
        path = self.root / ".autology" / "nodes" / "concepts" / f"{node}.md"
        text = path.read_text()
        old = self.model_nodes[node]
        path.write_text(text.replace(f"# {old}\n", "# hand edited\n", 1).replace("content of", "hand edited content of"))

    @rule(node=nodes)
    def remove_relations_by_hand(self, node):
        if node not in self.model_nodes:
            return
        from autology_mcp.knowledge.markdown import render_node as render

        path = self.root / ".autology" / "nodes" / "concepts" / f"{node}.md"
        path.write_text(render(parse_node(path.read_text()).replace(relations=())))
        self.model_relations = {r for r in self.model_relations if r[0] != node}
        self.autology.store.reconcile()

    @rule()
    def drop_graph_index(self):
        (self.root / ".autology" / "graph" / "index.json").unlink(missing_ok=True)
        self.autology.store.reconcile()

    @rule()
    def reconcile(self):
        self.autology.store.reconcile()

    @invariant()
    def files_and_graph_index_agree_with_the_model(self):
        files = node_files(self.root)
        assert {parse_node(t).id: parse_node(t).title for t in files.values()} == self.model_nodes
        assert {(s, t, ty) for s, t, ty, _d, _c in relations_in_files(self.root)} == self.model_relations
        assert_graph_index_matches_files(self.root)
        for instance in self.instances:
            assert instance.status().totalNodes == len(self.model_nodes)
            assert instance.status().totalRelations == len(self.model_relations)


StoreMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_any_sequence_of_operations = StoreMachine.TestCase


# ------------------------------------------------------------------------------ any input: a result or a clear error

_any_value = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 200), st.floats(allow_nan=True), st.text(max_size=20),
    st.sampled_from(["concept", "uses", "active", "auth", "", " ", "../x", "a.py#L1-2"]),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=8), st.sampled_from(["auth", "a.py"])), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip
_PARAMETERS = {
    "capture": ["title", "content", "type", "tags", "references", "session", "source", "confidence", "status"],
    "query": ["query", "type", "tags", "limit"],
    "update": ["id", "title", "content", "tags", "status", "confidence", "references"],
    "relate": ["source", "target", "type", "description", "confidence"],
    "unrelate": ["source", "target", "type"],
    "get": ["node_id"],
}


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(operation=st.sampled_from(sorted(_PARAMETERS)), data=st.data())
def test_any_input_gives_a_result_or_a_typed_error(autology, operation, data):
    """Whatever the types and values, an operation succeeds or raises one of the core's errors (never a crash)."""
    from autology_mcp.common.errors import AutologyError

    ids = [h.node.id for h in autology.query(limit=5)] or [autology.capture("Seed", "seed", type="concept").id]
    ids.append(ids[0].upper())
    kwargs = {name: data.draw(st.one_of(_any_value, st.sampled_from(ids)), label=name) for name in _PARAMETERS[operation]}
    try:
        getattr(autology, operation)(**kwargs)
    except AutologyError as exc:
        assert str(exc)


def test_in_an_obsidian_vault_every_link_resolves_and_the_title_is_an_alias(autology, root, capture):
    """Issue 14: links were bare UUIDs. Obsidian resolves [[id|title]] by the file name <id>.md and
    shows the title; aliases: [title] lets its quick switcher find a node by name."""
    import re

    a, b, c = capture("Gateway"), capture("Auth [v2] | tokens"), capture("Billing")
    autology.relate(a, b, "uses")
    autology.relate(a, c, "depends_on")
    autology.relate(c, b, "uses")
    vault = root / ".autology" / "nodes"
    names = {p.stem for p in vault.rglob("*.md")}
    links = [m for p in vault.rglob("*.md") for m in re.findall(r"\[\[([^\]|]+)\|([^\]]+)\]\]", p.read_text())]
    assert len(links) == 3 and all(target in names for target, _ in links)
    assert ("Auth (v2) / tokens" in {text for _, text in links})
    for path in vault.rglob("*.md"):
        front = yaml.safe_load(path.read_text().split("---\n")[1])
        assert front["aliases"][0] == front["title"]
