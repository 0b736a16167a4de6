"""`autology import adr` (issue 14): ADR folders in the Nygard / adr-tools format and in MADR become
decision nodes; a dry run writes nothing; a second run changes only what changed. The fixtures in
tests/fixtures/adr are written in those formats (the real sources tried are in docs/team.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autology_mcp.cli.main import main
from autology_mcp.knowledge.adr import missing_adr_sections
from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.service import Autology

FIXTURES = Path(__file__).parent / "fixtures" / "adr"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root / "docs" / "adr")
    return root


def run(capsys, root: Path, *args: str) -> dict:
    assert main(["--root", str(root), "import", "adr", str(root / "docs" / "adr"), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_dry_run_writes_nothing_and_apply_makes_decisions_with_their_four_sections(project: Path, capsys):
    dry = run(capsys, project)
    assert dry["applied"] is False and dry["counts"] == {"create": 4}  # the template is not a record
    assert not list((project / ".autology" / "nodes").rglob("*.md"))
    done = run(capsys, project, "--apply")
    assert done["counts"] == {"create": 4}
    service = Autology.open(project)
    try:
        nodes = {n.title: n for n in service.store.index.all_nodes()}
        assert set(nodes) == {"Record architecture decisions", "Use Redis for sessions", "Use Postgres for sessions",
                              "Use structured logging"}
        for node in nodes.values():
            assert node.type.value == "decision" and node.source == "import_adr"
            assert missing_adr_sections(node.content) == []
            assert node.references[0].startswith("docs/adr/")
        assert nodes["Use Redis for sessions"].status.value == "superseded"
        assert nodes["Use structured logging"].status.value == "needs_review"  # MADR's status: proposed
        assert set(nodes["Use structured logging"].tags) == {"logging", "observability"}
        madr = nodes["Use structured logging"].content
        assert "JSON lines through structlog" in madr.split("## Alternatives")[1]
        assert "incidents can filter by request id" in madr.split("## Consequences")[1]
        assert "(not recorded in the original ADR)" in nodes["Record architecture decisions"].content  # no alternatives
        newer = nodes["Use Postgres for sessions"]
        assert [(r.target, r.type.value) for r in newer.relations] == [(nodes["Use Redis for sessions"].id, "supersedes")]
        assert diagnose(service.store).ok
    finally:
        service.close()


def test_a_second_run_changes_only_what_changed(project: Path, capsys):
    run(capsys, project, "--apply")
    assert run(capsys, project, "--apply")["counts"] == {"unchanged": 4}
    record = project / "docs" / "adr" / "0001-record-architecture-decisions.md"
    record.write_text(record.read_text().replace("Accepted", "Deprecated"))
    again = run(capsys, project, "--apply")
    assert again["counts"] == {"unchanged": 3, "update": 1}
    service = Autology.open(project)
    try:
        nodes = {n.title: n for n in service.store.index.all_nodes()}
        assert len(nodes) == 4 and nodes["Record architecture decisions"].status.value == "superseded"
        assert len(nodes["Use Postgres for sessions"].relations) == 1  # the relation is not added twice
    finally:
        service.close()


def test_a_record_citing_another_is_related_to_it(tmp_path: Path, capsys):
    """Brighter's ADRs cite each other ("see ADR 0020", links to the other files): 44 of its 94 do.
    Each citation of a record in the folder becomes a relates_to relation; a pair a supersedes link
    already joins, a record citing itself and a number not in the folder do not."""
    root = tmp_path / "project"
    adr = root / "docs" / "adr"
    adr.mkdir(parents=True)
    sections = "## Context\n\nC.\n\n## Decision\n\nD.\n\n## Consequences\n\nE.\n"
    (adr / "0001-use-an-outbox.md").write_text(f"# 1. Use an outbox\n\n## Status\n\nAccepted\n\n{sections}")
    (adr / "0002-sweep-the-outbox.md").write_text(
        "# 2. Sweep the outbox\n\n## Status\n\nSuperseded by [3. Archive](0003-archive-the-outbox.md)\n\n"
        f"{sections}\nThis builds on ADR 0001 (and is ADR 2 itself).\n")
    (adr / "0003-archive-the-outbox.md").write_text(
        "# 3. Archive the outbox\n\n## Status\n\nAccepted\n\nSupersedes [2. Sweep](./0002-sweep-the-outbox.md)\n\n"
        f"{sections}\nSee [the outbox](../adr/0001-use-an-outbox.md#decision), ADR-9 and adr #0001.\n")
    dry = run(capsys, root)
    assert sorted((c["from"], c["to"]) for c in dry["cites"]) == [
        ("Archive the outbox", "Use an outbox"), ("Sweep the outbox", "Use an outbox")]
    run(capsys, root, "--apply")
    again = run(capsys, root, "--apply")  # a second run adds nothing
    assert again["counts"] == {"unchanged": 3}
    service = Autology.open(root)
    try:
        nodes = {n.title: n for n in service.store.index.all_nodes()}
        outbox = nodes["Use an outbox"].id
        rels = {(title, r.target, r.type.value, r.description) for title, n in nodes.items() for r in n.relations}
        assert rels == {
            ("Sweep the outbox", outbox, "relates_to", "cites ADR 1"),
            ("Archive the outbox", outbox, "relates_to", "cites ADR 1"),
            ("Archive the outbox", nodes["Sweep the outbox"].id, "supersedes", None),
        }
        assert diagnose(service.store).ok
    finally:
        service.close()


from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from autology_mcp.knowledge.importers.adr import parse_record  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(own=st.integers(1, 99), cited=st.lists(st.integers(0, 120), max_size=6),
       forms=st.lists(st.sampled_from(["ADR {n}", "ADR-{n:04d}", "adr #{n}", "[x]({n:04d}-a-b.md)", "[x](../d/{n:04d}_c.md#s)"]),
                      min_size=6, max_size=6),
       noise=st.text(alphabet="AD 0123456789-#().md/x", max_size=30))  # numbers and marks, never a citation
def test_citations_are_the_numbers_cited_other_than_its_own(own, cited, forms, noise):
    """Whatever the form a citation takes, the record cites exactly those numbers (its own left out),
    and text around them that cites nothing adds none."""
    text = f"# {own}. Title\n\n## Context\n\nx{noise}x\n\n" + " and ".join(
        form.format(n=n) for form, n in zip(forms, cited))
    record = parse_record(Path(f"{own:04d}-title.md"), text)
    assert set(record.cites) == set(cited) - {own}


# ------------------------------------------------------------------ fenced code (issue 29)

FENCED_RECORD = """## Status

Accepted

## Context

We build with make:

```sh
# build everything
make all
## Decision
* Status: superseded
```

````markdown
```
## Alternatives
```
## Status
````

   ~~~
## Consequences
   ~~~~

## Decision Outcome

Chosen: make.

```md
### Consequences
not these
```

### Consequences

* Good, because builds are fast.
"""


def test_headings_inside_fenced_code_are_not_sections_nor_the_title(tmp_path: Path, capsys):
    """Issue 29: a `## ` line inside fenced code (``` or ~~~, longer fences, indented up to three
    spaces, CommonMark) was taken for a section, and a shell comment `# ...` for the title."""
    root = tmp_path / "project"
    adr = root / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0007-use-make.md").write_text(FENCED_RECORD)
    record = parse_record(adr / "0007-use-make.md", FENCED_RECORD)
    assert record.title == "0007-use-make"  # no `# ` heading outside code: the file's name, not "build everything"
    assert record.status == "active" and record.superseded_by is None
    context = record.content.split("## Context\n\n", 1)[1].split("\n\n## Decision\n\n", 1)[0]
    assert context.startswith("We build with make:\n\n```sh\n# build everything\n") and context.endswith("## Consequences\n   ~~~~")
    decision = record.content.split("\n\n## Decision\n\n", 1)[1].split("\n\n## Alternatives\n\n", 1)[0]
    assert decision == "**Decision Outcome**\n\nChosen: make.\n\n```md\n### Consequences\nnot these\n```"
    assert "\n\n## Alternatives\n\n(not recorded in the original ADR)\n\n## Consequences\n\n**Consequences**\n\n" \
           "* Good, because builds are fast.\n\n_Imported" in record.content
    assert missing_adr_sections(record.content) == []
    dry = run(capsys, root)
    assert dry["counts"] == {"create": 1}


_INNER_LINES = ["## Decision", "## Status", "## Consequences", "### Consequences", "# Title", "## Other", "#comment",
                "* Status: superseded", "Superseded by 3", "```", "~~~", "``", "~~", "    ````", "  ``` x", "", "text"]


def _closes(line: str, char: str, length: int) -> bool:
    stripped = line.rstrip(" \t")
    indent = len(stripped) - len(stripped.lstrip(" "))
    run_ = stripped.lstrip(" ")
    return indent <= 3 and len(run_) >= length and set(run_) == {char}


@settings(max_examples=200, deadline=None)
@given(char=st.sampled_from("`~"), length=st.integers(3, 6), indent=st.integers(0, 3),
       info=st.sampled_from(["", "sh", "markdown", " python title=x", "~~~"]),
       inner=st.lists(st.one_of(st.sampled_from(_INNER_LINES), st.text(alphabet="#`~ *-abc:\t", max_size=12)),
                      max_size=8),
       closed=st.booleans())
def test_nothing_inside_a_fence_is_ever_a_section(char, length, indent, info, inner, closed):
    """Whatever a fenced block holds, the record's sections, title and status are those outside it."""
    assume(not (char == "~" and info.startswith("~")))  # that would be a longer fence, closed by a longer line
    inner = [line for line in inner if "\n" not in line and not _closes(line, char, length)]
    fence = " " * indent + char * length
    block = "\n".join([fence + info, *inner] + ([fence] if closed else []))
    tail = "\n\n## Decision\n\nD.\n" if closed else ""
    text = f"# 1. Title\n\n## Context\n\nbefore\n\n{block}{tail}"
    record = parse_record(Path("0001-title.md"), text)
    assert (record.title, record.status, record.superseded_by) == ("Title", "active", None)
    context = ("before\n\n" + block).strip()
    decision = "D." if closed else "(not recorded in the original ADR)"
    assert record.content == (
        f"## Context\n\n{context}\n\n## Decision\n\n{decision}\n\n## Alternatives\n\n(not recorded in the original ADR)"
        "\n\n## Consequences\n\n(not recorded in the original ADR)\n\n_Imported from `0001-title.md`; status: not stated._")
