"""`autology import claude-md` (issue 14): a CLAUDE.md with its @-imports, or a folder of memory
files, as one convention or concept per section; a dry run by default; idempotent."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from autology_mcp.cli.main import main
from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.importers.claude_md import sections_of
from autology_mcp.knowledge.service import Autology

CLAUDE_MD = """# CLAUDE.md

This file guides Claude Code in this repository. See @docs/testing.md for the test rules.

## Code style

- Use `ruff format` before committing.
- Never import from `app.internal` outside the app package.
- Prefer dataclasses over dicts for records.

## Architecture

The web tier talks to the billing service over gRPC; the billing service owns the ledger tables.
Jobs run in a separate worker process fed by Redis streams.

## **Release** `checklist`

1. Run the full suite.
2. Tag the release.
"""
TESTING_MD = """## Testing rules

- Always run `pytest -x` before pushing.
- Do not mock the database: use the test container.
"""


def run(capsys, root: Path, path: Path, *args: str) -> dict:
    assert main(["--root", str(root), "import", "claude-md", str(path), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_sections_of_a_claude_md_and_its_imports_become_conventions_and_concepts(tmp_path: Path, capsys):
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    (root / "docs" / "testing.md").write_text(TESTING_MD)
    dry = run(capsys, root, root / "CLAUDE.md")
    assert {(s["title"], s["type"]) for s in dry["sections"]} == {
        ("Code style", "convention"), ("Architecture", "concept"), ("Release checklist", "convention"),
        ("Testing rules", "convention")}
    assert not list(root.rglob(".autology/nodes/**/*.md"))
    run(capsys, root, root / "CLAUDE.md", "--apply")
    assert run(capsys, root, root / "CLAUDE.md", "--apply")["counts"] == {"unchanged": 4}
    (root / "docs" / "testing.md").write_text(TESTING_MD + "- Keep tests under a minute.\n")
    assert run(capsys, root, root / "CLAUDE.md", "--apply")["counts"] == {"unchanged": 3, "update": 1}
    service = Autology.open(root)
    try:
        nodes = {n.title: n for n in service.store.index.all_nodes()}
        assert "Keep tests under a minute" in nodes["Testing rules"].content
        assert nodes["Code style"].source == "import_claude_md"
        assert nodes["Testing rules"].extra["imported_from"] == "docs/testing.md#Testing rules"
        assert [h.node.title for h in service.query("billing ledger grpc")][:1] == ["Architecture"]
        assert diagnose(service.store).ok
    finally:
        service.close()


def test_a_memory_folder_gives_a_node_per_section_or_per_file(tmp_path: Path, capsys):
    root = tmp_path / "project"
    root.mkdir()
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("## Deploys\n\nAlways deploy from main after CI passes.\n")
    (memory / "user-preferences.md").write_text("# User preferences\n\nThe user reads diffs in split view.\n")
    data = run(capsys, root, memory, "--apply")
    assert {(s["title"], s["type"]) for s in data["sections"]} == {("Deploys", "convention"), ("User preferences", "concept")}


# ------------------------------------------------------------------ fenced code (issue 29)

FENCED_CLAUDE_MD = """# CLAUDE.md

## Commands

Run these before pushing:

```bash
# lint
ruff check .
## not a section
```

~~~~
~~~
## Nor this one
@docs/secret.md
~~~~

   ```
## Nor this, in an indented fence
   ```

## Layout

The app lives in `src/`.
"""


def test_headings_and_imports_inside_fenced_code_are_not_sections(tmp_path: Path, capsys):
    """Issue 29: a `## ` line inside fenced code (``` or ~~~, longer fences, indented up to three spaces)
    was taken for a section; a `# ` shell comment for the title; an @path in code for an import
    (Claude Code does not follow those either)."""
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(FENCED_CLAUDE_MD)
    (root / "docs" / "secret.md").write_text("## Secret\n\nAlways whisper.\n")
    (root / "notes.md").write_text("```sh\n# install the tools\nmake setup\n## not a title\n```\n\nThen run make.\n")
    dry = run(capsys, root, root / "CLAUDE.md")
    assert [s["title"] for s in dry["sections"]] == ["Commands", "Layout"]
    sections = sections_of(root / "CLAUDE.md")
    assert sections[0].text.startswith("Run these before pushing:\n\n```bash\n# lint\n")
    assert sections[0].text.endswith("## Nor this, in an indented fence\n   ```")
    only = sections_of(root / "notes.md")  # no heading outside code: one section named after the file
    assert [(s.heading, s.text) for s in only] == [("notes", (root / "notes.md").read_text().strip())]


@settings(max_examples=200, deadline=None)
@given(char=st.sampled_from("`~"), length=st.integers(3, 6), indent=st.integers(0, 3),
       inner=st.lists(st.one_of(st.sampled_from(["## Beta", "# Gamma", "### Delta", "```", "~~~", "``", "  ~~", ""]),
                               st.text(alphabet="#`~ *-abc:\t", max_size=12)), max_size=8),
       closed=st.booleans(), h1=st.booleans())
def test_nothing_inside_a_fence_is_ever_a_section_or_a_title(tmp_path_factory, char, length, indent, inner, closed, h1):
    inner = [line for line in inner if "\n" not in line and not _closes(line, char, length)]
    fence = " " * indent + char * length
    block = "\n".join([fence, *inner] + ([fence] if closed else []))
    folder = tmp_path_factory.mktemp("notes")
    with_sections = folder / "with-sections.md"
    with_sections.write_text(f"## Alpha\n\nBefore.\n\n{block}" + ("\n\n## Omega\n\nAfter.\n" if closed else "\n"))
    found = sections_of(with_sections)
    assert [s.heading for s in found] == (["Alpha", "Omega"] if closed else ["Alpha"])
    assert found[0].text == f"Before.\n\n{block}".strip("\n")
    without = folder / "no-sections.md"
    without.write_text(("# Title\n\n" if h1 else "") + f"Intro.\n\n{block}\n")
    found = sections_of(without)
    assert [(s.heading, s.text) for s in found] == [("Title" if h1 else "no sections", f"Intro.\n\n{block}".strip())]


def _closes(line: str, char: str, length: int) -> bool:
    stripped = line.rstrip(" \t")
    run_ = stripped.lstrip(" ")
    return len(stripped) - len(run_) <= 3 and len(run_) >= length and set(run_) == {char}
