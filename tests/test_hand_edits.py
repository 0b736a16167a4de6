"""Files edited by hand (Obsidian, an editor, a bad merge): malformed YAML, missing fields, unknown fields,
the same id in two files. `autology doctor` reports each; nothing is lost, and no file the user did not
ask to change is rewritten (byte for byte), whatever the server, the CLI and the watcher do meanwhile.

Complements test_doctor.py (one problem kind per test) and test_store.py (reconcile behaviour)."""

from __future__ import annotations

import json
import uuid

import anyio
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
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
        f"{NODES}/concepts/no-id.md": ("---\ntype: concept\ntitle: No id here\nmodified: 2026-01-01T00:00:00Z\n---\nText.\n", "breaks_rule", "has no id"),
        f"{NODES}/concepts/no-title.md": (f"---\nid: {new_id()}\ntype: concept\n---\nText.\n", "breaks_rule", "has no title; it is read as 'no title'"),
        f"{NODES}/concepts/no-type.md": (f"---\nid: {new_id()}\ntitle: Typeless\n---\nText.\n", "breaks_rule", "has no type; it is read as concept"),
        f"{NODES}/concepts/bad-type.md": (f"---\nid: {new_id()}\ntype: idea\ntitle: Unknown type\n---\n", "breaks_rule", "type 'idea' is not a node type"),
        f"{NODES}/concepts/bad-confidence.md": (f"---\nid: {new_id()}\ntype: concept\ntitle: Sure\nconfidence: .nan\n---\n", "breaks_rule", "confidence nan is not a number"),
        f"{NODES}/concepts/bad-relation.md": (f"---\nid: {new_id()}\ntype: concept\ntitle: Rel\nrelations:\n- type: uses\n  target: ../../etc/passwd\n---\n", "breaks_rule", "relation {'type': 'uses', 'target': '../../etc/passwd'} is not"),
        f"{NODES}/concepts/bad-anchor.md": (f"---\nid: {new_id()}\ntype: concept\ntitle: Anchor\nreferences:\n- app.py#SYSTEM:force_push\n---\n", "breaks_rule", "reference 'app.py#SYSTEM:force_push' has an anchor that is not a line span"),
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

    # The doctor named every problem file with its kind and reason: a file that parses but breaks a
    # write rule is a node (issue 38), with the rule it breaks; only what does not parse is skipped.
    found: dict[str, list] = {}
    for p in report["problems"]:
        found.setdefault(p["path"], []).append(p)
    for rel, (_text, kind, words) in files.items():
        assert rel in found, (rel, report["problems"])
        assert any(p["kind"] == kind and words in p["message"] for p in found[rel]), (words, found[rel])
    # and the valid files not named <id>.md are valid nodes in the wrong place (nothing else)
    breaking = {rel for rel, (_t, kind, _w) in files.items() if kind == "breaks_rule"}
    assert {p["path"] for p in report["problems"] if p["kind"] == "misplaced"} == {
        p.relative_to(root).as_posix() for p in styled.values()
    } | breaking - {f"{NODES}/concepts/no-id.md"}  # read under an id derived from its path: not misplaced
    assert {p["kind"] for p in report["problems"]} == {"malformed", "duplicate_id", "misplaced", "breaks_rule"}
    assert status["totalNodes"] == 5 + len(styled) - 1 + len(breaking)
    assert {m["path"] for m in status["malformedFiles"]} == {
        rel for rel, (_t, kind, _w) in files.items() if kind != "breaks_rule"}

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


# ------------------------------------------------------------------ files that break a write rule (issue 38)

LONG_TITLE = ("Why the ingestion pipeline retries every upload to the archive bucket three times with a jittered "
              "backoff before it gives up")  # 120 characters: the tools write at most 100
LONG_TITLE = (LONG_TITLE + " and pages the on-call engineer")[:150]


def hand_file(root, name: str, frontmatter: str, body: str, folder: str = "concepts"):
    path = root / NODES / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}---\n\n{body}\n", encoding="utf-8")
    return path


def rule_breaking_store(root, autology):
    """Two hand-written files the tools would not write: a 150-character title, an unknown type."""
    assert len(LONG_TITLE) == 150
    long_id, idea_id = new_id(), new_id()
    long_path = hand_file(root, f"{long_id}.md", f"id: {long_id}\ntype: decision\ntitle: {LONG_TITLE}\n",
                          "## Context\nUploads to the archive bucket fail transiently.\n\n## Decision\nRetry them.\n",
                          folder="decisions")
    idea_path = hand_file(root, f"{idea_id}.md", f"id: {idea_id}\ntype: idea\ntitle: Quarantine flaky fixtures\n"
                          "status: draft\n", "Move the flaky fixtures of the sandbox harness into a quarantine suite.")
    autology.store.reconcile()
    return (long_id, long_path), (idea_id, idea_path)


def test_a_long_title_and_an_unknown_type_are_found_by_the_mcp_tools_and_named_by_the_doctor(autology, root, capsys):
    (long_id, long_path), (idea_id, idea_path) = rule_breaking_store(root, autology)
    before = file_bytes(root)

    async def session():
        from mcp import Client

        from autology_mcp.server.app import build_server

        async with Client(build_server(autology)) as client:
            found = {}
            for query in ("archive bucket upload retries", "quarantine flaky fixtures"):
                result = await client.call_tool("autology_query", {"query": query})
                assert not result.is_error, result.content[0].text
                found[query] = [hit["node"] for hit in result.structured_content["result"]]
                search = await client.call_tool("autology_search", {"query": query, "scope": ["nodes"]})
                assert not search.is_error, search.content[0].text
                found[query + " (search)"] = json.dumps(search.structured_content)
            status = (await client.call_tool("autology_status", {})).structured_content
            return found, status

    found, status = anyio.run(session)
    long_hits = found["archive bucket upload retries"]
    assert long_hits[0]["id"] == long_id and long_hits[0]["title"] == LONG_TITLE  # whole, as written
    idea_hits = found["quarantine flaky fixtures"]
    assert idea_hits[0]["id"] == idea_id and idea_hits[0]["type"] == "concept"  # the stand-in of 'idea'
    assert long_id in found["archive bucket upload retries (search)"]
    assert idea_id in found["quarantine flaky fixtures (search)"]
    assert status["malformedFiles"] == [] and status["totalNodes"] == 2

    assert main(["--root", str(root), "doctor", "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    by_path = {}
    for p in problems:
        assert p["kind"] == "breaks_rule", p
        by_path.setdefault(p["path"], []).append(p["message"])
    rel = lambda path: path.relative_to(root).as_posix()  # noqa: E731
    assert by_path[rel(long_path)] == [
        f"title is 150 characters; the tools write at most 100: shorten it, or `autology update {long_id} --title ...`"]
    assert sorted(by_path[rel(idea_path)], reverse=True) == [
        "type 'idea' is not a node type; it is read as concept: set `type:` in the file to one of decision, component,"
        " convention, concept, pattern, issue, session (kept as written until then)",
        f"status 'draft' is not one of active, needs_review, superseded; it is read as active: `autology update {idea_id}"
        " --status ...`",
    ]
    assert main(["--root", str(root), "doctor"]) == 1
    out = capsys.readouterr().out
    assert f"✗ [breaks_rule] {rel(long_path)}: title is 150 characters" in out
    assert file_bytes(root) == before  # read, searched, diagnosed: never rewritten


def test_the_prompt_hook_injects_a_node_with_a_long_title_and_one_with_an_unknown_type(root, monkeypatch):
    from core_helpers import GIT_ENV, git

    from autology_mcp.hooks.prompt import user_prompt_submit

    for name in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    git(root, "init", "-q", "-b", "main")
    service = Autology.open(root)
    try:
        (long_id, _), (idea_id, _) = rule_breaking_store(root, service)
        service.capture("Invoice numbering", "Invoices are numbered per tenant and year.", type="convention")
    finally:
        service.close()

    def injected(prompt: str) -> str:
        output = user_prompt_submit({"session_id": f"s-{prompt[:5]}", "cwd": str(root),
                                     "hook_event_name": "UserPromptSubmit", "prompt": prompt})
        assert output is not None, f"the hook injected nothing for {prompt!r}"
        return output["hookSpecificOutput"]["additionalContext"]

    text = injected("Why does the ingestion pipeline retry every upload to the archive bucket?")
    assert LONG_TITLE[:60] in text and "Invoice" not in text
    text = injected("Should we quarantine the flaky fixtures of the sandbox harness?")
    assert "Quarantine flaky fixtures" in text and "Invoice" not in text


def test_a_write_through_the_tools_keeps_what_the_person_wrote_and_says_so(autology, root):
    (long_id, long_path), (idea_id, idea_path) = rule_breaking_store(root, autology)
    other = autology.capture("Other", "other words", type="concept").id
    message = autology.update(long_id, tags=["uploads"])
    assert "Warning: the file breaks a rule the tools write by, kept as the person wrote it: title is 150" in message
    autology.relate(idea_id, other, "uses")
    autology.store.reconcile()
    long_front = yaml.safe_load(long_path.read_text(encoding="utf-8").split("---\n")[1])
    idea_front = yaml.safe_load(idea_path.read_text(encoding="utf-8").split("---\n")[1])
    assert long_front["title"] == LONG_TITLE and long_front["tags"] == ["uploads"]
    assert (idea_front["type"], idea_front["status"]) == ("idea", "draft")  # not the stand-ins
    assert [r["target"] for r in idea_front["relations"]] == [other]
    assert autology.get(long_id).title == LONG_TITLE

    # The tools' own checks are unchanged: a long title given to them is refused.
    from autology_mcp.common.errors import ValidationError

    with pytest.raises(ValidationError, match="is 150 characters long; the limit is 100"):
        autology.update(long_id, title=LONG_TITLE)
    with pytest.raises(ValidationError, match="is 150 characters long"):
        autology.capture(LONG_TITLE, "text", type="concept")
    # Fixing it through the tools replaces what was written in that field, and the rule break is gone.
    autology.update(long_id, title="Retry archive uploads three times")
    autology.update(idea_id, status="active")  # the stand-in's value, given: the status as written goes
    autology.store.reconcile()
    idea_front = yaml.safe_load(idea_path.read_text(encoding="utf-8").split("---\n")[1])
    assert (idea_front["type"], idea_front["status"]) == ("idea", "active")
    from autology_mcp.knowledge.doctor import diagnose

    assert [(p.path, p.message.split(";")[0]) for p in diagnose(autology.store).problems] == [
        (idea_path.relative_to(root).as_posix(), "type 'idea' is not a node type")]


def test_a_file_without_a_valid_id_is_found_and_never_rewritten(autology, root):
    path = hand_file(root, "retry-notes.md", "type: convention\ntitle: Retry notes\n",
                     "Every retry loop logs its attempt number.", folder="conventions")
    autology.store.reconcile()
    hits = autology.query("retry loop attempt number")
    assert [h.node.title for h in hits] == ["Retry notes"]
    node_id = hits[0].node.id
    from autology_mcp.common.errors import StorageError
    from autology_mcp.knowledge.markdown import stand_in_id

    assert node_id == stand_in_id(f"{NODES}/conventions/retry-notes.md")
    text = path.read_text(encoding="utf-8")
    with pytest.raises(StorageError, match=f"no valid id.*put `id: {node_id}` in its front matter"):
        autology.update(node_id, content="changed")
    assert path.read_text(encoding="utf-8") == text
    autology.store.rebuild()
    assert autology.get(node_id).title == "Retry notes"  # the same id after a rebuild


def test_without_an_id_no_fix_sends_a_person_to_the_tools_that_refuse_the_node(autology, root):
    long_title = "A title a person wrote by hand that runs well past the hundred characters the tools write for any node"
    hand_file(root, "long.md", f"type: concept\ntitle: {long_title}\n", "Text.")
    autology.store.reconcile()
    from autology_mcp.knowledge.rules import rule_breaks

    (node,) = [n for n in autology.store.index.all_nodes() if n.title == long_title]
    fixes = {b.field: b.fix for b in rule_breaks(node)}
    assert set(fixes) == {"id", "title"} and fixes["id"].startswith("put `id: ")
    assert "autology update" not in fixes["title"] and "in the file" in fixes["title"]


# Values a person may write, valid or not, for each field the tools check on writes.
_word = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
_scalar = st.one_of(_word, st.integers(-5, 5), st.floats(-3, 3, allow_nan=False), st.booleans(),
                    st.lists(_word, max_size=2), st.dictionaries(_word, _word, max_size=2))
_FIELDS = {
    "type": st.one_of(st.sampled_from(["decision", "concept", "Decisions", "idea", "adr"]), _scalar),
    "title": st.lists(_word, min_size=1, max_size=40).map(" ".join),  # up to ~500 characters
    "status": st.one_of(st.sampled_from(["active", "superseded", "draft"]), _scalar),
    "confidence": st.one_of(st.floats(0, 1), st.floats(1.01, 9), _scalar),
    "created": st.one_of(st.just("2026-01-02T03:04:05Z"), _scalar),
    "modified": st.one_of(st.just("2026-02-03T04:05:06Z"), _scalar),
    "session": st.one_of(_word, st.just("a b"), _scalar),
    "source": st.one_of(st.sampled_from(["manual", "hook_post_commit", "obsidian"]), _scalar),
    "tags": st.one_of(st.lists(_word, max_size=40), st.integers(), st.dictionaries(_word, _word, max_size=2)),
    "references": st.lists(st.one_of(st.sampled_from(["src/a.py", "src/b.py#L1-2", "../up.py", "/abs.py", "x#!"]),
                                     _scalar), max_size=4),
    "relations": st.lists(st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(["uses", "knows"]),
                               "target": st.sampled_from([str(uuid.UUID(int=7, version=4)), "nope"])}), _scalar),
        max_size=3),
}


@settings(max_examples=int(__import__("os").environ.get("HAND_EXAMPLES", "150")), deadline=None)
@given(front=st.fixed_dictionaries({"id": st.one_of(st.just(str(uuid.UUID(int=5, version=4))), _scalar)},
                                   optional=_FIELDS))
def test_what_the_lenient_reader_accepts_round_trips_what_the_person_wrote(front):
    """Any front matter the reader accepts: a write through the tools gives the file back what the
    person wrote in every field the write did not change (nothing lost on a rewrite), the cache's copy
    is the file's (nothing lost on a rebuild), and a field the tools would refuse is named by a rule."""
    from datetime import UTC, datetime

    from autology_mcp.knowledge.markdown import MalformedNodeError, parse_node, render_node
    from autology_mcp.knowledge.node_index import node_from_json, node_to_json
    from autology_mcp.knowledge.rules import rule_breaks

    path = f"{NODES}/decisions/hand.md"
    text = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\nWritten by hand.\n"
    try:
        node = parse_node(text, fallback_time=datetime(2026, 5, 1, tzinfo=UTC), path=path)
    except MalformedNodeError as exc:  # only what is no node: here, extra keys are never written
        raise AssertionError(f"a mapping of known keys is a node: {exc.reason}\n{text}") from None
    rewritten = render_node(node)
    again = parse_node(rewritten, fallback_time=datetime(2026, 5, 1, tzinfo=UTC), path=path)
    # a field that was missing is filled with its stand-in; everything else reads back the same
    assert again == node.replace(as_written={k: v for k, v in node.as_written.items() if v is not None})
    written = yaml.safe_load(rewritten.split("---\n")[1])
    for key, value in node.as_written.items():
        if key in ("references", "relations"):
            assert all(item in written[key] for item in value)
        elif value is not None:
            assert written[key] == front[key], key
    if "title" in front:
        assert node.title == front["title"] and written["title"] == front["title"]  # whole, however long
    assert node_from_json(node_to_json(node)) == node
    assert {b.field for b in rule_breaks(node)} >= set(node.as_written)
