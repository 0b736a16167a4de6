"""Health analysis on real stores (and a real git repository for stale references)."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.analyze import CATEGORIES, analyze, render
from autology_mcp.knowledge.service import Autology

ADR = "## Context\nc\n\n## Decision\nd\n\n## Alternatives\na\n\n## Consequences\nq"


@pytest.fixture
def service(tmp_path: Path):
    s = Autology.open(tmp_path)
    yield s
    s.close()


def kinds(report: dict, category: str) -> list[tuple[str, str]]:
    return [(f["kind"], f["id"]) for f in report["categories"][category]["findings"]]


def test_healthy_graph_scores_100(service: Autology) -> None:
    a = service.capture("Search engine choice", ADR, type="decision").id
    b = service.capture("Search module", "Ranks nodes.", type="component").id
    service.relate(a, b, "affects")
    report = analyze(service.store)
    assert report["score"] == 100
    assert set(report["categories"]) == set(CATEGORIES)
    assert all(c["count"] == 0 for c in report["categories"].values())


def test_empty_store_is_healthy(service: Autology) -> None:
    assert analyze(service.store)["score"] == 100


def test_structure_orphans_and_dangling_targets(service: Autology, tmp_path: Path) -> None:
    a = service.capture("Linked one", "x", type="concept").id
    b = service.capture("Linked two", "y", type="concept").id
    lonely = service.capture("Lonely", "z", type="concept").id
    service.relate(a, b, "relates_to")
    ghost = str(uuid.uuid4())
    node_file = next(tmp_path.glob(f".autology/nodes/concepts/{a}.md"))  # hand edit: a relation to a missing node
    text = node_file.read_text().replace("relations:\n", f"relations:\n- type: uses\n  target: {ghost}\n", 1)
    node_file.write_text(text)
    service.store.reconcile()

    report = analyze(service.store)

    found = kinds(report, "structure")
    assert ("orphan", lonely) in found and ("dangling_target", a) in found
    assert ("orphan", b) not in found
    assert report["categories"]["structure"]["score"] == round(100 * (1 - 2 / 3))


def test_review_needs_review_and_superseded_still_referenced(service: Autology) -> None:
    old = service.capture("Use Redis cache", ADR, type="decision").id
    new = service.capture("Use in-process cache", ADR, type="decision").id
    user = service.capture("Cache client", "Talks to the cache.", type="component").id
    service.relate(new, old, "supersedes")
    service.relate(user, old, "uses")
    service.update(old, status="superseded")
    service.update(user, status="needs_review")

    found = kinds(analyze(service.store), "review")

    assert ("needs_review", user) in found
    assert ("superseded_still_referenced", old) in found
    assert all(node_id != new for _, node_id in found)


def test_adr_sections_missing(service: Autology, tmp_path: Path) -> None:
    good = service.capture("Complete ADR", ADR, type="decision").id
    bad = service.capture("Incomplete ADR", ADR, type="decision").id
    node_file = tmp_path / ".autology" / "nodes" / "decisions" / f"{bad}.md"
    node_file.write_text(node_file.read_text().replace("## Alternatives\na\n", ""))  # hand edit
    service.store.reconcile()

    category = analyze(service.store, ["adr"])["categories"]["adr"]

    assert [(f["id"], f["detail"]) for f in category["findings"]] == [(bad, "missing ADR section(s): Alternatives")]
    assert category["considered"] == 2 and category["score"] == 50
    assert good


def git(root: Path, *args: str, date: str | None = None) -> None:
    """Run git; ``date`` sets both the author and the committer date."""
    env = (
        os.environ
        | ({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {})
        | {
            "GIT_AUTHOR_NAME": "T",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@e",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
    )
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def test_stale_references_missing_and_changed(service: Autology, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kept.py").write_text("a = 1\n")
    (tmp_path / "src" / "changed.py").write_text("b = 1\nc = 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "src")
    git(tmp_path, "commit", "-qm", "init", date="2020-01-01T00:00:00Z")  # before the nodes
    fresh = service.capture("Kept module", "x", type="component", references=["src/kept.py"]).id
    stale = service.capture("Changed module", "y", type="component", references=["src/changed.py#L1"]).id
    gone = service.capture("Gone module", "z", type="component", references=["src/gone.py"]).id
    (tmp_path / "src" / "changed.py").write_text("b = 2\nc = 1\n")
    (tmp_path / "src" / "kept.py").write_text("a = 1\n# a later commit that changes nothing the node says\n")
    git(tmp_path, "add", "src")
    git(tmp_path, "commit", "-qm", "change", date="2099-01-01T00:00:00Z")  # after the nodes

    report = analyze(service.store, ["references"])
    found = kinds(report, "references")

    assert ("stale", stale) in found
    assert ("missing_file", gone) in found
    assert all(node_id != fresh for _, node_id in found)  # a later commit alone is not a finding
    detail = next(f["detail"] for f in report["categories"]["references"]["findings"] if f["id"] == stale)
    assert detail.startswith("src/changed.py#L1: lines 1-1 of src/changed.py changed (")


def test_outside_git_a_changed_file_is_not_called_stale(service: Autology, tmp_path: Path) -> None:
    """Staleness is decided from git history, never from file times (issue 29)."""
    (tmp_path / "notes.txt").write_text("v1\n")
    service.capture("Notes", "x", type="concept", references=["notes.txt"])
    later = time.time() + 5
    (tmp_path / "notes.txt").write_text("v2, all different\n")
    os.utime(tmp_path / "notes.txt", (later, later))

    assert kinds(analyze(service.store, ["references"]), "references") == []


def test_duplicate_titles_and_depends_on_cycles(service: Autology) -> None:
    a = service.capture("Retry policy for the client", "x", type="convention").id
    b = service.capture("Client retry policy", "y", type="convention").id
    other_type = service.capture("Retry policy for the client", "z", type="concept").id
    x = service.capture("Service X", "x", type="component").id
    y = service.capture("Service Y", "y", type="component").id
    z = service.capture("Service Z", "z", type="component").id
    service.relate(x, y, "depends_on")
    service.relate(y, z, "depends_on")
    service.relate(z, x, "depends_on")

    report = analyze(service.store, ["consistency"])
    findings = report["categories"]["consistency"]["findings"]

    dup = [f for f in findings if f["kind"] == "duplicate_title"]
    assert len(dup) == 1 and {dup[0]["id"], *dup[0]["detail"].split()[-1:]} == {a, b}
    cycle = [f for f in findings if f["kind"] == "depends_on_cycle"]
    assert len(cycle) == 1 and all(i in cycle[0]["detail"] for i in (x, y, z))
    assert other_type not in str(dup)
    assert "consistency" in render(report)


def test_unknown_category_is_refused(service: Autology) -> None:
    with pytest.raises(ValidationError, match="categor"):
        analyze(service.store, ["beauty"])


async def test_autology_analyze_tool_over_mcp(service: Autology) -> None:
    from mcp import Client

    from autology_mcp.server.app import build_server

    lonely = service.capture("Lonely", "z", type="concept").id
    async with Client(build_server(service)) as client:
        result = await client.call_tool("autology_analyze", {"categories": ["structure"]})
        assert not result.is_error
        report = result.structured_content
        assert list(report["categories"]) == ["structure"] and report["score"] == 0
        assert report["categories"]["structure"]["findings"][0]["id"] == lonely
        bad = await client.call_tool("autology_analyze", {"categories": ["beauty"]})
        assert bad.is_error and "categor" in bad.content[0].text


def test_node_committed_with_its_code_is_not_stale(service: Autology, tmp_path: Path) -> None:
    (tmp_path / "api.py").write_text("def handle_request():\n    return 1\n")
    node = service.capture("API module", "Requests go through `handle_request`.", type="component",
                           references=["api.py"]).id
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "code and its node together", date="2099-01-01T00:00:00Z")  # later than `modified`

    assert kinds(analyze(service.store, ["references"]), "references") == []
    (tmp_path / "api.py").write_text("def serve():\n    return 1\n")
    git(tmp_path, "add", "api.py")
    git(tmp_path, "commit", "-qm", "code alone", date="2099-02-01T00:00:00Z")
    assert kinds(analyze(service.store, ["references"]), "references") == [("stale", node)]