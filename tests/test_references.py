"""References matched against files, and the index's refs table that finds the nodes about a file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autology_mcp.knowledge.references import covers, nodes_referencing


def test_a_reference_covers_its_file_and_the_files_below_a_folder():
    assert covers("src/a.py#L10-20", "src/a.py")
    assert covers("src/", "src/a.py") and covers("src", "src/sub/b.py")
    assert not covers("src/a", "src/ab.py")
    assert not covers("#symbol", "src/a.py")


def test_the_index_finds_the_nodes_about_changed_files(autology, capture):
    by_file = capture("By file", references=["src/billing/invoice.py#L10-40"])
    by_folder = capture("By folder", references=["src/billing"])
    by_symbol = capture("By symbol", references=["src/billing/tax.py#compute"])
    capture("Unrelated", references=["docs/intro.md"])
    capture("No references")
    index = autology.store.index
    assert [n.id for n in index.referencing(["src/billing/invoice.py"])] == sorted([by_file, by_folder])
    assert {n.id for n in index.referencing(["src/billing/tax.py", "README.md"])} == {by_folder, by_symbol}
    assert index.referencing(["src/other.py"]) == []
    assert index.referencing([]) == []


def test_the_refs_follow_updates_and_deletes(autology, capture):
    node = capture("Moves", references=["src/old.py"])
    index = autology.store.index
    autology.update(node, references=["src/new.py"])
    assert index.referencing(["src/old.py"]) == []
    assert [n.id for n in index.referencing(["src/new.py"])] == [node]
    autology.delete(node)
    assert index.referencing(["src/new.py"]) == []


_parts = st.sampled_from(["src", "lib", "a", "b", "x.py", "y.ts"])
_path = st.lists(_parts, min_size=1, max_size=3).map("/".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    refs=st.lists(
        st.lists(st.tuples(_path, st.sampled_from(["", "#L1-2", "#sym", "/"])).map("".join), max_size=3),
        min_size=1,
        max_size=8,
    ),
    files=st.lists(_path, max_size=4),
)
def test_the_index_agrees_with_matching_every_node(tmp_path_factory, refs, files):
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(tmp_path_factory.mktemp("refs"), durable=False)
    store.init()
    service = Autology(store)
    try:
        for i, node_refs in enumerate(refs):
            service.capture(f"Node {i}", "Text.", type="concept", references=node_refs)
        expected = nodes_referencing(store.index.all_nodes(), files)
        got = nodes_referencing(store.index.referencing(files), files)
        assert [(n.id, m) for n, m in got] == [(n.id, m) for n, m in expected]
    finally:
        service.close()


def test_relative_to_root_re_expresses_repository_paths(tmp_path: Path) -> None:
    from autology_mcp.knowledge.references import relative_to_root

    (tmp_path / "app").mkdir()
    files = ["README.md", "app/main.py", "app/pkg/x.py", "apple/y.py", "app"]
    assert relative_to_root(files, tmp_path, tmp_path) == files
    assert relative_to_root(files, tmp_path, tmp_path / "app") == ["main.py", "pkg/x.py"]
    assert relative_to_root(files, tmp_path / "app", tmp_path) == []  # the root is above the repository
    many = [f"app/f{i}.py" for i in range(20_000)]
    assert len(relative_to_root(many, tmp_path, tmp_path / "app")) == 20_000
