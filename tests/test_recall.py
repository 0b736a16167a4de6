"""SessionStart's recall ranking (ranked in SQLite) equals ranking every node in Python."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autology_mcp.hooks.handlers import TYPE_WEIGHT, recall_text
from autology_mcp.knowledge.references import matching_references
from autology_mcp.knowledge.trust.untrusted import quoted


def _expected_lines(nodes, recent, status):
    def key(node):
        touched = 3.0 if matching_references(node, recent) else 0.0
        return (-(touched + TYPE_WEIGHT.get(node.type.value, 1.0) + node.confidence), -node.modified.timestamp(), node.id)

    return [f"- [{n.type.value}] {n.id}: {quoted(n.title)}" for n in sorted((n for n in nodes if n.status.value == status), key=key)]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    specs=st.lists(
        st.tuples(
            st.sampled_from(["decision", "convention", "issue", "component", "concept", "pattern"]),
            st.sampled_from(["active", "active", "needs_review", "superseded"]),
            st.sampled_from([0.7, 0.85, 0.9]),
            st.lists(st.sampled_from(["src/a.py", "src", "lib/b.ts#L1-3", "docs"]), max_size=2),
        ),
        min_size=1,
        max_size=25,
    ),
    recent=st.lists(st.sampled_from(["src/a.py", "src/c.py", "lib/b.ts", "README.md"]), max_size=3),
)
def test_recall_ranks_like_sorting_every_node(tmp_path_factory, specs, recent):
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(tmp_path_factory.mktemp("recall"), durable=False)
    store.init()
    service = Autology(store)
    try:
        for i, (node_type, status, confidence, refs) in enumerate(specs):
            content = "## Context\nc\n## Decision\nd\n## Alternatives\na\n## Consequences\nq" if node_type == "decision" else "x"
            service.capture(f"Node {i}", content, type=node_type, status=status, confidence=confidence, references=refs)
        nodes = list(store.index.all_nodes())
        text = recall_text(store, recent, limit=100_000)
        lines = [line for line in text.splitlines() if line.startswith("- [")]
        expected = _expected_lines(nodes, recent, "active")
        expected += [line + " — needs review" for line in _expected_lines(nodes, recent, "needs_review")]
        assert lines == expected[: len(lines)]
        assert len(lines) == min(len(expected), 2 * (100_000 // 20 + 1))
        assert f"{len(nodes)} knowledge node(s)" in text
    finally:
        service.close()
