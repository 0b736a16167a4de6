"""Node files an attacker could commit (a YAML alias bomb, nesting that crashes libyaml, a 50 MB file, huge
unknown keys): each is reported as malformed with its reason, never rewritten, and the rest of the store,
the server and the watcher go on. Issue 13 found the alias bomb stalling every process for minutes."""

from __future__ import annotations

import time

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from core_helpers import hostile_node_files, write_hostile, write_node_file
from mcp import Client

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.markdown import MalformedNodeError, parse_node
from autology_mcp.knowledge.models import new_id
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.watch import NodeWatcher
from autology_mcp.server.app import build_server

HOSTILE = hostile_node_files(new_id())


@pytest.mark.parametrize("name", [n for n, (text, _) in HOSTILE.items() if isinstance(text, str)])
def test_parse_node_refuses_each_hostile_text_with_its_reason(name):
    text, words = HOSTILE[name]
    with pytest.raises(MalformedNodeError, match=words):
        parse_node(text)


def test_an_alias_anywhere_is_refused_but_anchors_alone_and_plain_nesting_are_read():
    head = f"---\nid: {new_id()}\ntype: concept\ntitle: T\nmodified: 2026-01-01T00:00:00Z\n"
    with pytest.raises(MalformedNodeError, match="aliases"):
        parse_node(head + "base: &b {x: 1}\nother: *b\n---\n")
    with pytest.raises(MalformedNodeError, match="aliases"):
        parse_node(head + "base: &b {x: 1}\nother:\n  <<: *b\n---\n")
    node = parse_node(head + "solo: &s [1, 2]\nnested: {a: [[1, [2, [3]]]]}\n---\n")
    assert node.extra == {"solo": [1, 2], "nested": {"a": [[1, [2, [3]]]]}}


def test_hostile_files_are_reported_never_rewritten_and_the_store_goes_on(root):
    service = Autology.open(root)
    try:
        kept = service.capture("Regular node", "still found", type="concept").id
        paths = {}
        for name, (text, _words) in HOSTILE.items():
            paths[name] = root / ".autology" / "nodes" / "concepts" / f"{name}.md"
            write_hostile(paths[name], text)
        before = {name: (p.stat().st_size, p.stat().st_mtime_ns) for name, p in paths.items()}
        service.store.reconcile()  # what the server and the CLI do before each request
        status = service.status()
        reasons = {m["path"].rsplit("/", 1)[-1][:-3]: m["reason"] for m in status.malformedFiles}
        for name, (_text, words) in HOSTILE.items():
            assert words in reasons[name], (name, reasons.get(name))
        assert status.totalNodes == 1
        assert [hit.node.id for hit in service.query("regular")] == [kept]
        service.update(kept, content="changed while hostile files sit beside it")
        service.store.rebuild()
        assert {name: (p.stat().st_size, p.stat().st_mtime_ns) for name, p in paths.items()} == before
    finally:
        service.close()


def wait_for(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_watcher_survives_every_hostile_file_and_the_server_keeps_answering(root):
    service = Autology.open(root)
    watcher = NodeWatcher(service.store)
    watcher.start()
    try:
        folder = root / ".autology" / "nodes" / "concepts"
        for name, (text, _words) in HOSTILE.items():
            write_hostile(folder / f"{name}.md", text)
        # the watcher alone (no reconcile is asked for) records every one as malformed ...
        assert wait_for(lambda: len(service.store.index.errors()) == len(HOSTILE)), service.store.index.errors()
        assert watcher.alive
        # ... and still sees the next hand-written node
        write_node_file(root, "concept", title="Written after the hostile files", body="seen by the watcher")
        assert wait_for(lambda: service.store.index.count() == 1)

        async def session():
            async with Client(build_server(service)) as client:
                result = await client.call_tool("autology_capture", {"title": "After", "content": "x", "type": "concept"})
                assert not result.is_error, result.content[0].text
                return (await client.call_tool("autology_status", {})).structured_content

        status = anyio.run(session)
        assert status["totalNodes"] == 2
        assert len(status["malformedFiles"]) == len(HOSTILE)
    finally:
        watcher.stop()
        service.close()


def test_the_node_file_cap_is_configurable_and_holds_for_writes_too(root):
    (root / ".autology").mkdir()
    (root / ".autology" / "config.toml").write_text("[store]\nmax_node_file_bytes = 65536\n")
    service = Autology.open(root)
    try:
        with pytest.raises(ValidationError, match="65,536-byte limit"):  # the store would skip its own file
            service.capture("Too big for this project", "word " * 20_000, type="concept")
        assert service.status().totalNodes == 0 and not list((root / ".autology" / "nodes").rglob("*.md"))
        _, path = write_node_file(root, "concept", title="Big, by hand", body="word " * 20_000)
        service.store.reconcile()
        status = service.status()
        assert status.totalNodes == 0
        assert "65,536-byte limit" in status.malformedFiles[0]["reason"] and "not read" in status.malformedFiles[0]["reason"]
    finally:
        service.close()


CONFLICTED = """<<<<<<< HEAD
We use Redis for sessions.
=======
We use Postgres for sessions.
>>>>>>> feature/sessions
"""


def test_a_node_file_left_with_git_conflict_markers_is_malformed_not_read_as_text(root):
    service = Autology.open(root)
    try:
        node_id, path = write_node_file(root, "decision", title="Session store", body=CONFLICTED)
        service.store.reconcile()
        reasons = [m["reason"] for m in service.status().malformedFiles]
        assert len(reasons) == 1 and "unresolved git merge conflict at line" in reasons[0]
        with pytest.raises(ValidationError, match="merge conflict markers"):
            service.capture("Conflicted", CONFLICTED, type="concept")
        # talking about conflicts is fine: the markers alone, out of order or not at line starts
        service.capture("Merging", "Resolve lines between <<<<<<< and >>>>>>> by hand.", type="convention")
    finally:
        service.close()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "a: &x [1, 2]\n", "b: *x\n", "c: <<: *x\n", "d: " + "[" * 40 + "]" * 40 + "\n", "e:\n" + "  " * 140 + "- x\n",
    "f: {g: [h, {i: j}]}\n", "k: 'quoted [ { '\n", "l: |\n  block\n", "m: 2026-01-05\n", "n: !!binary aGVsbG8=\n",
    "o: !!python/object:os.system ls\n", "p: " + "x" * 70_000 + "\n", "? complex key\n: value\n", "q: [\n",
]), max_size=6))
def test_parse_node_on_any_mix_of_hostile_frontmatter_returns_or_says_why(pieces):
    """Fuzz: whatever the mix, parse_node returns a node or raises MalformedNodeError, never another
    error, never a Python object built from a tag, never a crash of the process."""
    text = f"---\nid: {new_id()}\ntype: concept\ntitle: Fuzzed\nmodified: 2026-01-01T00:00:00Z\n" + "".join(pieces) + "---\nbody\n"
    try:
        node = parse_node(text)
    except MalformedNodeError as exc:
        assert exc.reason
        return
    assert all(isinstance(v, (str, int, float, bool, list, dict, bytes, type(None))) or hasattr(v, "isoformat")
               for v in node.extra.values())


def test_a_relate_from_a_hub_does_not_parse_its_yaml_again(root, monkeypatch):
    """Issue 13: each relate re-read and re-dumped the source's whole YAML (1,000 hub edges took 109 s).
    The file's parse now comes from the index while the file is as the index last saw it."""
    import autology_mcp.knowledge.store as store_module

    service = Autology.open(root)
    try:
        hub = service.capture("Hub", "everything relates to it", type="component").id
        targets = [service.capture(f"T{i}", "x", type="concept").id for i in range(30)]
        calls = []
        real_parse = store_module.parse_node
        monkeypatch.setattr(store_module, "parse_node", lambda *a, **k: calls.append(1) or real_parse(*a, **k))
        for target in targets:
            service.relate(hub, target, "relates_to")
        assert calls == []
        path = service.store.abs(service.store.index.node_path(hub))
        path.write_text(path.read_text().replace("everything relates to it", "edited by hand meanwhile, at length"))
        service.relate(hub, targets[0], "uses")  # a hand edit: the file is read again, the edit kept
        assert calls and "edited by hand meanwhile, at length" in path.read_text()
    finally:
        service.close()
