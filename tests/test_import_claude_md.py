"""`autology import claude-md` (issue 14): a CLAUDE.md with its @-imports, or a folder of memory
files, as one convention or concept per section; a dry run by default; idempotent."""

from __future__ import annotations

import json
from pathlib import Path

from autology_mcp.cli.main import main
from autology_mcp.knowledge.doctor import diagnose
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
