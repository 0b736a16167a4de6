"""`autology merge-driver`: real `git merge`s of branches that changed the same node (issue 14).
Before it, two branches each relating one node conflicted inside `relations:` and `## Related`,
and any two edits of a node conflicted on `modified:`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from core_helpers import GIT_ENV, git

from autology_mcp.cli.main import main
from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.service import Autology

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "team"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert main(["--root", str(root), "init", "--git"]) == 0
    assert ".autology/nodes/**/*.md merge=autology" in (root / ".gitattributes").read_text()
    assert "merge-driver %O %A %B %P" in git(root, "config", "merge.autology.driver")
    return root


def on_branch(root: Path, branch: str, change, base: str = "main") -> None:
    git(root, "checkout", "-q", "-B", branch, base)
    service = Autology.open(root)
    try:
        change(service)
    finally:
        service.close()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{branch}")


def merge(root: Path, branch: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(["git", "merge", "--no-edit", branch], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})


def seed(root: Path) -> dict[str, str]:
    service = Autology.open(root)
    try:
        ids = {name: service.capture(name, f"{name} does one thing.\nIt has a second line.\nAnd a third.", type="component").id
               for name in ("Gateway", "Auth", "Billing")}
    finally:
        service.close()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    return ids


def node(root: Path, node_id: str):
    service = Autology.open(root)
    try:
        return service.store.get(node_id), diagnose(service.store)
    finally:
        service.close()


def test_two_branches_relating_one_node_merge_cleanly(repo: Path):
    ids = seed(repo)
    on_branch(repo, "a", lambda s: s.relate(ids["Gateway"], ids["Auth"], "uses"))
    on_branch(repo, "b", lambda s: s.relate(ids["Gateway"], ids["Billing"], "depends_on"))
    result = merge(repo, "a")
    assert result.returncode == 0, result.stdout + result.stderr
    # the first command after the merge, `autology doctor`, passes: the derived graph index is behind the
    # merged files, and it is rewritten and said, not failed (issue 29)
    assert main(["--root", str(repo), "doctor"]) == 0
    merged, report = node(repo, ids["Gateway"])
    assert {(r.target, r.type.value) for r in merged.relations} == {(ids["Auth"], "uses"), (ids["Billing"], "depends_on")}
    text = (repo / ".autology/nodes/components" / f"{ids['Gateway']}.md").read_text()
    assert f"- [[{ids['Auth']}|Auth]]" in text and f"- [[{ids['Billing']}|Billing]]" in text and "<<<<<<<" not in text
    assert report.ok, report.to_dict()


def test_tags_union_and_the_later_modified_wins(repo: Path):
    ids = seed(repo)
    on_branch(repo, "a", lambda s: s.update(ids["Auth"], tags=["security"]))
    on_branch(repo, "b", lambda s: s.update(ids["Auth"], tags=["api"]))
    assert merge(repo, "a").returncode == 0
    merged, report = node(repo, ids["Auth"])
    assert set(merged.tags) == {"security", "api"} and report.ok


def test_content_edits_on_different_lines_merge_and_on_the_same_line_conflict(repo: Path):
    ids = seed(repo)
    on_branch(repo, "a", lambda s: s.update(ids["Billing"], content="Billing does one thing well.\nIt has a second line.\nAnd a third."))
    on_branch(repo, "b", lambda s: s.update(ids["Billing"], content="Billing does one thing.\nIt has a second line.\nAnd a third, edited."))
    assert merge(repo, "a").returncode == 0
    merged, report = node(repo, ids["Billing"])
    assert merged.content == "Billing does one thing well.\nIt has a second line.\nAnd a third, edited." and report.ok

    on_branch(repo, "c", lambda s: s.update(ids["Auth"], content="Auth signs tokens."))
    on_branch(repo, "d", lambda s: s.update(ids["Auth"], content="Auth checks passwords."))
    result = merge(repo, "c")
    assert result.returncode != 0  # both changed the same line: a person decides
    text = (repo / ".autology/nodes/components" / f"{ids['Auth']}.md").read_text()
    assert "<<<<<<<" in text and "Auth signs tokens." in text and "Auth checks passwords." in text
    assert text.startswith("---\n") and "relations:" in text  # the frontmatter itself merged, not marked
    _, report = node(repo, ids["Gateway"])
    assert any("merge conflict" in p.message for p in report.problems)


def test_a_field_only_one_side_changed_is_taken_and_both_changing_the_title_conflicts(repo: Path):
    ids = seed(repo)
    on_branch(repo, "a", lambda s: s.update(ids["Gateway"], status="superseded"))
    on_branch(repo, "b", lambda s: s.relate(ids["Gateway"], ids["Auth"], "uses"))
    assert merge(repo, "a").returncode == 0
    merged, _ = node(repo, ids["Gateway"])
    assert merged.status.value == "superseded" and len(merged.relations) == 1

    on_branch(repo, "c", lambda s: s.update(ids["Billing"], title="Billing service"))
    on_branch(repo, "d", lambda s: s.update(ids["Billing"], title="Invoicing"))
    result = merge(repo, "c")
    assert result.returncode != 0 and "both sides changed title" in result.stderr + result.stdout


def test_delete_on_one_side_and_edit_on_the_other_stays_a_git_conflict(repo: Path):
    ids = seed(repo)
    on_branch(repo, "a", lambda s: s.delete(ids["Billing"]))
    on_branch(repo, "b", lambda s: s.update(ids["Billing"], tags=["kept"]))
    result = merge(repo, "a")
    assert result.returncode != 0 and "deleted" in (result.stdout + result.stderr).lower()
    service = Autology.open(repo)
    try:
        problems = [p for p in diagnose(service.store).problems if p.kind == "unmerged"]
    finally:
        service.close()
    assert [p.path for p in problems] == [f".autology/nodes/components/{ids['Billing']}.md"]
    assert "deleted on their branch, edited on ours" in problems[0].message and "git rm" in problems[0].message


def test_without_the_driver_the_same_relates_conflict(tmp_path: Path):
    """The control: git's own line merge of the same two branches conflicts (what issue 14 found)."""
    root = tmp_path / "plain"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert main(["--root", str(root), "init", "--no-git"]) == 0
    assert not (root / ".gitattributes").exists()
    ids = seed(root)
    on_branch(root, "a", lambda s: s.relate(ids["Gateway"], ids["Auth"], "uses"))
    on_branch(root, "b", lambda s: s.relate(ids["Gateway"], ids["Billing"], "depends_on"))
    result = merge(root, "a")
    assert result.returncode != 0 and "CONFLICT" in result.stdout


def test_a_relation_removed_on_one_side_stays_removed_while_the_other_side_adds_one():
    from autology_mcp.knowledge.markdown import render_node
    from autology_mcp.knowledge.merge import merge_texts
    from autology_mcp.knowledge.models import KnowledgeNode, Relation, new_id, utc_now

    a, b, c = new_id(), new_id(), new_id()
    now = utc_now()
    base = KnowledgeNode(id=new_id(), type="component", title="N", content="text", created=now, modified=now,
                         relations=(Relation(target=a, type="uses"), Relation(target=b, type="uses")))
    ours = base.replace(relations=(Relation(target=b, type="uses"),))  # unrelated from a
    theirs = base.replace(relations=(*base.relations, Relation(target=c, type="affects")), tags=("new",))
    result = merge_texts(render_node(base), render_node(ours), render_node(theirs))
    assert result.conflicts == []
    from autology_mcp.knowledge.markdown import parse_node

    merged = parse_node(result.text)
    assert [(r.target, r.type.value) for r in merged.relations] == [(b, "uses"), (c, "affects")]
    assert merged.tags == ("new",)
