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


# ------------------------------------------------------------------ doctor and the merge setup (issue 38)


def problems_of(root: Path, kind: str):
    service = Autology.open(root)
    try:
        return [p for p in diagnose(service.store).problems if p.kind == kind]
    finally:
        service.close()


def relate_on_two_branches(root: Path) -> dict[str, str]:
    ids = seed(root)
    on_branch(root, "a", lambda s: s.relate(ids["Gateway"], ids["Auth"], "uses"))
    on_branch(root, "b", lambda s: s.relate(ids["Gateway"], ids["Billing"], "depends_on"))
    return ids


def test_a_clone_without_the_driver_registered_is_reported_before_the_merge(repo: Path, tmp_path: Path):
    ids = relate_on_two_branches(repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "-B", "a", "origin/a")
    git(clone, "checkout", "-q", "-B", "b", "origin/b")
    registered = subprocess.run(["git", "config", "--get", "merge.autology.driver"], cwd=clone, capture_output=True, text=True)
    assert (clone / ".gitattributes").exists() and registered.stdout == ""
    [problem] = problems_of(clone, "merge_driver")
    assert problem.path == ".gitattributes"
    assert "this clone has not registered it" in problem.message and "run `autology init` in this clone" in problem.message

    result = merge(clone, "a")  # what the doctor warned of: git's line merge conflicts
    assert result.returncode != 0 and "CONFLICT" in result.stdout
    git(clone, "merge", "--abort")
    assert main(["--root", str(clone), "init"]) == 0  # the fix the doctor gave
    assert problems_of(clone, "merge_driver") == []
    assert merge(clone, "a").returncode == 0
    merged, report = node(clone, ids["Gateway"])
    assert {r.target for r in merged.relations} == {ids["Auth"], ids["Billing"]} and report.ok


def test_a_driver_whose_interpreter_is_gone_is_reported_and_the_lost_side_comes_back(repo: Path, monkeypatch):
    ids = relate_on_two_branches(repo)
    moved = repo.parent / "moved-venv" / "bin" / "python"  # a .venv moved away after `autology init`
    git(repo, "config", "merge.autology.driver", f"{moved} -m autology_mcp merge-driver %O %A %B %P")
    [problem] = problems_of(repo, "merge_driver")
    assert problem.path == ".git/config" and str(moved) in problem.message and "does not exist" in problem.message
    assert "run `autology init` in this clone" in problem.message

    result = merge(repo, "a")
    assert result.returncode != 0
    rel = f".autology/nodes/components/{ids['Gateway']}.md"
    text = (repo / rel).read_text()
    assert "<<<<<<<" not in text and ids["Billing"] in text and ids["Auth"] not in text  # only ours, no markers
    [unmerged] = problems_of(repo, "unmerged")
    assert unmerged.path == rel
    assert "holds only ours, with no conflict markers (what a failed merge driver leaves): their side (stage 3" in unmerged.message
    assert "`git add` now would drop it" in unmerged.message
    assert f"`autology merge-file {rel}`" in unmerged.message and f"`git show :3:{rel}`" in unmerged.message

    # The advised recovery, as a person runs it from the repository.
    monkeypatch.chdir(repo)
    assert main(["merge-file", rel]) == 0
    git(repo, "add", rel)
    git(repo, "commit", "-q", "--no-edit")
    merged, _ = node(repo, ids["Gateway"])
    assert {(r.target, r.type.value) for r in merged.relations} == {(ids["Auth"], "uses"), (ids["Billing"], "depends_on")}
    assert problems_of(repo, "unmerged") == []

    # And the other recovery the doctor names: fix the driver, then let git merge the file again with it.
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert merge(repo, "a").returncode != 0
    assert main(["--root", str(repo), "init"]) == 0
    assert problems_of(repo, "merge_driver") == []
    git(repo, "checkout", "-m", "--", rel)
    merged, _ = node(repo, ids["Gateway"])
    assert {r.target for r in merged.relations} == {ids["Auth"], ids["Billing"]}


def test_a_driver_whose_interpreter_cannot_import_autology_is_reported(repo: Path, tmp_path: Path):
    system = Path("/usr/bin/python3")
    if not system.exists():
        pytest.skip("no system python3 to stand for a virtualenv rebuilt without autology")
    bare = tmp_path / "bare-python"  # an interpreter that runs, without autology_mcp (isolated: no PYTHONPATH)
    bare.write_text(f'#!/bin/sh\nexec {system} -I "$@"\n')
    bare.chmod(0o755)
    if subprocess.run([str(bare), "-c", "import autology_mcp"], capture_output=True).returncode == 0:
        pytest.skip("autology_mcp is installed into the system python3")
    git(repo, "config", "merge.autology.driver", f"{bare} -m autology_mcp merge-driver %O %A %B %P")
    [problem] = problems_of(repo, "merge_driver")
    assert f"interpreter {bare} cannot import autology_mcp" in problem.message
    assert "run `autology init` in this clone" in problem.message


def test_a_node_file_that_breaks_a_write_rule_merges_line_by_line_keeping_what_was_written():
    from autology_mcp.knowledge.markdown import parse_node
    from autology_mcp.knowledge.merge import merge_texts
    from autology_mcp.knowledge.models import new_id

    node_id, a = new_id(), new_id()
    base = f"---\nid: {node_id}\ntype: idea\ntitle: Quarantine flaky fixtures\nstatus: draft\nmodified: 2026-01-01T00:00:00Z\n---\n\nFirst line.\nSecond line.\nThird line.\n"
    ours = base.replace("First line.", "First line, ours.").replace("status: draft\n", f"status: draft\nrelations:\n- type: uses\n  target: {a}\n")
    theirs = base.replace("Third line.", "Third line, theirs.")
    result = merge_texts(base, ours, theirs, path="x.md")
    assert result.conflicts == []
    merged = parse_node(result.text, path=".autology/nodes/concepts/x.md")
    assert merged.as_written == {"type": "idea", "status": "draft"}  # kept as the person wrote them
    assert merged.content == "First line, ours.\nSecond line.\nThird line, theirs." and [r.target for r in merged.relations] == [a]
