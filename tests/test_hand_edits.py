"""Files edited by hand (Obsidian, an editor, a bad merge): malformed YAML, missing fields, unknown fields,
the same id in two files. `autology doctor` reports each; nothing is lost, and no file the user did not
ask to change is rewritten (byte for byte), whatever the server, the CLI and the watcher do meanwhile.

Complements test_doctor.py (one problem kind per test) and test_store.py (reconcile behaviour)."""

from __future__ import annotations

import json

import anyio
import pytest
import yaml
from core_helpers import hostile_node_files, write_hostile, write_node_file

from autology_mcp.cli.main import main
from autology_mcp.knowledge.models import new_id
from autology_mcp.knowledge.service import Autology

NODES = ".autology/nodes"


def hand_written_store(root, autology):
    """A store with regular nodes and every kind of hand edit. Returns (regular ids, {path: expected kind})."""
    regular = [autology.capture(f"Regular {i}", f"regular words {i}", type="concept").id for i in range(4)]
    autology.relate(regular[0], regular[1], "uses")
    copied = autology.capture("Copied by hand", "the original", type="pattern").id
    files = {
        f"{NODES}/issues/bad-yaml.md": ("---\nid: " + new_id() + "\ntitle: [unclosed\ntype: issue\n---\nBody kept.\n", "malformed", "invalid YAML frontmatter"),
        f"{NODES}/concepts/tab-yaml.md": ("---\nid: x\n\ttitle: tab indented\n---\n", "malformed", "invalid YAML frontmatter"),
        f"{NODES}/concepts/no-id.md": ("---\ntype: concept\ntitle: No id here\nmodified: 2026-01-01T00:00:00Z\n---\nText.\n", "malformed", "missing required field 'id'"),
        f"{NODES}/concepts/no-title.md": (f"---\nid: {new_id()}\ntype: concept\n---\nText.\n", "malformed", "missing required field 'title'"),
        f"{NODES}/concepts/no-type.md": (f"---\nid: {new_id()}\ntitle: Typeless\n---\nText.\n", "malformed", "missing required field 'type'"),
        f"{NODES}/concepts/bad-type.md": (f"---\nid: {new_id()}\ntype: idea\ntitle: Unknown type\n---\n", "malformed", "Invalid type"),
        f"{NODES}/concepts/bad-confidence.md": (f"---\nid: {new_id()}\ntype: concept\ntitle: Sure\nconfidence: .nan\n---\n", "malformed", "Invalid confidence"),
        f"{NODES}/concepts/bad-relation.md": (f"---\nid: {new_id()}\ntype: concept\ntitle: Rel\nrelations:\n- type: uses\n  target: ../../etc/passwd\n---\n", "malformed", "relations[1].target"),
        f"{NODES}/concepts/no-frontmatter.md": ("Just some notes, no frontmatter.\n", "malformed", "no YAML frontmatter"),
        f"{NODES}/concepts/unterminated.md": (f"---\nid: {new_id()}\ntype: concept\ntitle: Open\n", "malformed", ""),
        f"{NODES}/concepts/binary.md": (None, "malformed", "not UTF-8"),
        f"{NODES}/patterns/copy-of-a-node.md": ("COPY", "duplicate_id", f"duplicate id {copied}"),
    }
    for name, (text, words) in hostile_node_files(new_id()).items():  # what an attacker could commit
        files[f"{NODES}/concepts/hostile-{name}.md"] = (text, "malformed", words)
    for rel, (text, _kind, _words) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.write_bytes(b"---\nid: \xff\xfe\n---\n")
        elif isinstance(text, int):
            write_hostile(path, text)
        elif text == "COPY":
            path.write_bytes((root / f"{NODES}/patterns/{copied}.md").read_bytes().replace(b"the original", b"the copy"))
        else:
            path.write_text(text, encoding="utf-8")
    # valid files written in styles autology would not write itself: kept as they are until changed
    styled = {}
    for style, text in {
        "crlf": "---\r\nid: {id}\r\ntype: convention\r\ntitle: Windows newlines\r\n---\r\n\r\nWritten on Windows.\r\n",
        "bom": "\ufeff---\nid: {id}\ntype: convention\ntitle: With a BOM\n---\nByte order mark.\n",
        "flow": '---\n{{id: "{id}", type: convention, title: "Flow style", tags: [A Tag, b]}}\n---\nFlow.\n',
        "comments": "---\n# a comment the user wrote\nid: {id}   # inline\ntype: convention\ntitle: Commented\n---\nC.\n",
    }.items():
        node_id = new_id()
        path = root / f"{NODES}/conventions/{style}.md"
        path.write_bytes(text.format(id=node_id).encode("utf-8"))
        styled[node_id] = path
    return regular, copied, files, styled


def file_bytes(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / NODES).rglob("*.md"))}


def test_doctor_reports_every_hand_edit_and_nothing_is_rewritten(autology, root, capsys):
    regular, copied, files, styled = hand_written_store(root, autology)
    autology.store.reconcile()
    before = file_bytes(root)

    # Everything a user's tools might do meanwhile: the doctor, a rebuild, queries, graph walks and health
    # reports through the server, and writes to other nodes (each rewrites index.json and the cache).
    assert main(["--root", str(root), "doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert main(["--root", str(root), "rebuild", "--json"]) == 0
    capsys.readouterr()

    async def session():
        from mcp import Client

        from autology_mcp.server.app import build_server

        async with Client(build_server(autology)) as client:
            for tool, args in [
                ("autology_status", {}),
                ("autology_query", {"query": "unclosed typeless windows flow commented"}),
                ("autology_query", {}),
                ("autology_graph", {"operation": "neighbours", "id": regular[0], "depth": 3}),
                ("autology_analyze", {}),
                ("autology_update", {"id": regular[2], "content": "changed by the server"}),
                ("autology_relate", {"source": regular[2], "target": regular[3], "type": "affects"}),
                ("autology_update", {"id": copied, "tags": ["edited"]}),  # the id that has a copy
                ("autology_delete", {"id": regular[3]}),
            ]:
                result = await client.call_tool(tool, args)
                assert not result.is_error, (tool, result.content[0].text)
            return (await client.call_tool("autology_status", {})).structured_content

    status = anyio.run(session)
    autology.store.reconcile()
    after = file_bytes(root)

    # The doctor named every problem file with its kind and reason.
    found = {p["path"]: p for p in report["problems"]}
    for rel, (_text, kind, words) in files.items():
        assert rel in found, (rel, report["problems"])
        assert found[rel]["kind"] == kind and words in found[rel]["message"], found[rel]
    # and the valid files not named <id>.md are valid nodes in the wrong place (nothing else)
    assert {p["path"] for p in report["problems"] if p["kind"] == "misplaced"} == {
        p.relative_to(root).as_posix() for p in styled.values()
    }
    assert {p["kind"] for p in report["problems"]} == {"malformed", "duplicate_id", "misplaced"}
    assert status["totalNodes"] == 5 + len(styled) - 1
    assert {m["path"] for m in status["malformedFiles"]} == set(files)

    # Only the files the server was asked to change changed; the copy of `copied` is untouched.
    changed = {k for k in before if after.get(k) != before[k]}
    assert changed == {f"{NODES}/concepts/{regular[2]}.md", f"{NODES}/patterns/{copied}.md", f"{NODES}/concepts/{regular[3]}.md"}
    assert f"{NODES}/concepts/{regular[3]}.md" not in after  # the deleted one
    for path in styled.values():  # valid hand-written styles were read, never normalised
        assert after[path.relative_to(root).as_posix()] == before[path.relative_to(root).as_posix()]
    for node_id in styled:
        assert autology.get(node_id).title in {"Windows newlines", "With a BOM", "Flow style", "Commented"}


UNKNOWN = """aliases:
- First alias
- Zweiter Alias ✓
cssclasses: [wide, dark]
reviewed: 2026-01-05
rating: 4.5
draft: false
owner: null
nested:
  depth:
    list:
    - {a: 1, b: [x, y]}
    - multi
text: |
  A literal block
    with indentation
  and two lines.
"""


@pytest.mark.parametrize("change", ["title", "content", "tags", "status", "relate", "unrelate", "references"])
def test_unknown_fields_survive_every_kind_of_change_with_their_values(autology, root, change):
    node_id, path = write_node_file(root, "concept", title="Obsidian note", body="Body.", extra_frontmatter=UNKNOWN)
    other = autology.capture("Other", "other", type="concept").id
    autology.store.reconcile()
    expected = yaml.safe_load(UNKNOWN)
    if change == "unrelate":
        autology.relate(node_id, other, "uses")
        autology.unrelate(node_id, other, "uses")
    elif change == "relate":
        autology.relate(node_id, other, "uses", description="links: [not, yaml]")
    else:
        value = {"title": "Renamed", "content": "New body", "tags": ["x"], "status": "needs_review", "references": ["src/a.py#L1-2"]}[change]
        autology.update(node_id, **{change: value})
    text = path.read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---\n")[1])
    title = "Renamed" if change == "title" else "Obsidian note"
    expected["aliases"] = [title, *expected["aliases"]]  # the title first (Obsidian finds the node by it), then the person's own
    assert {k: front[k] for k in expected} == expected
    assert autology.get(node_id).title == title


def test_an_update_of_a_malformed_node_is_refused_and_the_file_kept(autology, root):
    node_id = new_id()
    path = root / f"{NODES}/concepts/{node_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"---\nid: {node_id}\ntype: concept\ntitle: [broken\n---\nPrecious hand-written text.\n"
    path.write_text(text, encoding="utf-8")
    autology.store.reconcile()
    from autology_mcp.common.errors import StorageError

    for call in (
        lambda: autology.update(node_id, title="Fixed"),
        lambda: autology.delete(node_id),
        lambda: autology.relate(node_id, autology.capture("T", "t", type="concept").id, "uses"),
    ):
        with pytest.raises(StorageError, match="malformed and cannot be changed"):
            call()
    assert path.read_text(encoding="utf-8") == text


def test_fixing_a_malformed_file_by_hand_brings_the_node_back_with_its_relations(autology, root):
    target = autology.capture("Target", "t", type="concept").id
    node_id = new_id()
    path = root / f"{NODES}/concepts/{node_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = f"---\nid: {node_id}\ntype: concept\ntitle: [oops\nrelations:\n- type: uses\n  target: {target}\n---\nBody.\n"
    path.write_text(broken, encoding="utf-8")
    autology.store.reconcile()
    assert autology.status().totalRelations == 0
    path.write_text(broken.replace("[oops", "Fixed"), encoding="utf-8")
    autology.store.reconcile()
    assert autology.get(node_id).title == "Fixed"
    assert autology.status().totalRelations == 1 and autology.status().malformedFiles == []


def test_the_same_id_in_two_files_survives_a_rebuild_and_a_restart(root):
    service = Autology.open(root)
    node_id = service.capture("Original", "original words", type="concept").id
    original = root / f"{NODES}/concepts/{node_id}.md"
    copy = root / f"{NODES}/concepts/zz-copy.md"
    copy.write_bytes(original.read_bytes().replace(b"original words", b"copied words"))
    before = file_bytes(root)
    service.store.rebuild()
    service.close()
    service = Autology.open(root)
    try:
        assert service.get(node_id).content == "original words"
        assert [p for p, _ in service.store.index.errors()] == [f"{NODES}/concepts/zz-copy.md"]
        assert file_bytes(root) == before
    finally:
        service.close()
