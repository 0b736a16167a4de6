"""A code index due for a full rebuild (its format, engine or build settings changed: after an
upgrade) is rebuilt in the background by a long-lived process, which answers at once; a CLI run
rebuilds inline and says why on stderr."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest
from retrieval_fixtures import make_project

from autology_mcp.code.build import full_rebuild_reason
from autology_mcp.code.config import INDEX_FORMAT_VERSION, load_index_config
from autology_mcp.code.layout import IndexLocation
from autology_mcp.retrieval import channels
from autology_mcp.retrieval.engine import search


@pytest.fixture
def proj(tmp_path):
    p = make_project(tmp_path / "proj")
    channels._refreshed.clear()
    yield p
    p.autology.close()
    channels.rebuild_in_background(False)
    _wait_for_rebuilds()
    channels._refreshed.clear()


def _wait_for_rebuilds(timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while channels._rebuilding and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not channels._rebuilding


def _location(root):
    cfg = load_index_config(root)
    return IndexLocation.of(root, cfg), cfg


def _age_manifest(root, **changes) -> None:
    """Make the index look built by an older version (another engine or index format)."""
    loc, _ = _location(root)
    manifest = json.loads(loc.manifest.read_text())
    for key, value in changes.items():
        if key == "engine_version":
            manifest["engine"]["version"] = value
        else:
            manifest[key] = value
    loc.manifest.write_text(json.dumps(manifest))


def _search(proj, query="websocket reconnect backoff"):
    return search(proj.root, query, scope=["code"], store=proj.autology.store)


def test_full_rebuild_reason_reads_the_manifest(proj):
    loc, cfg = _location(proj.root)
    assert full_rebuild_reason(loc, cfg) is None
    _age_manifest(proj.root, engine_version=0)
    assert full_rebuild_reason(loc, cfg) == "engine changed"
    _age_manifest(proj.root, format_version=INDEX_FORMAT_VERSION - 1)
    assert full_rebuild_reason(loc, cfg) == "index format changed"


def test_a_server_answers_from_the_previous_build_while_it_rebuilds(proj, monkeypatch):
    from autology_mcp.code import build as build_mod

    channels.rebuild_in_background(True)
    _age_manifest(proj.root, engine_version=0)
    release = threading.Event()
    real_build = build_mod.build

    def slow_build(*args, **kwargs):  # the rebuild takes until the test lets it finish
        assert release.wait(30)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(build_mod, "build", slow_build)
    first = _search(proj)
    fresh = first["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "rebuilding" and fresh["previous_build"] is True
    assert "engine changed" in fresh["note"]
    assert first["hits"] and first["hits"][0]["path"] == "src/net/websocket.py"  # read from the previous build
    assert "being rebuilt" in first["guidance"]
    second = _search(proj)  # one rebuild at a time
    assert second["trace"]["freshness"]["code_index"]["checked"] == "rebuilding"
    assert len(channels._rebuilding) == 1
    release.set()
    _wait_for_rebuilds()
    loc, cfg = _location(proj.root)
    assert full_rebuild_reason(loc, cfg) is None  # rebuilt, with this version's engine
    after = _search(proj)
    assert after["trace"]["freshness"]["code_index"]["checked"] != "rebuilding"
    assert after["guidance"] is None and after["hits"][0]["path"] == "src/net/websocket.py"


def test_an_index_of_another_format_is_not_read_while_it_rebuilds(proj, monkeypatch):
    from autology_mcp.code import build as build_mod

    channels.rebuild_in_background(True)
    _age_manifest(proj.root, format_version=INDEX_FORMAT_VERSION - 1)
    release = threading.Event()
    real_build = build_mod.build
    monkeypatch.setattr(build_mod, "build", lambda *a, **k: (release.wait(30), real_build(*a, **k))[1])
    answer = search(proj.root, "websocket reconnect backoff", store=proj.autology.store)
    fresh = answer["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "rebuilding" and fresh["previous_build"] is False
    assert "node" in {h["kind"] for h in answer["hits"]} <= {"node", "commit"}  # nodes (and the history) still answer
    code_runs = {c["name"]: c["status"] for c in answer["trace"]["channels"] if c["name"] in ("code_bm25", "paths")}
    assert set(code_runs.values()) == {"rebuilding"}
    assert "code and docs are not searched" in answer["guidance"]
    release.set()
    _wait_for_rebuilds()
    after = _search(proj)
    assert after["hits"][0]["path"] == "src/net/websocket.py"


def test_a_cli_run_rebuilds_inline_and_says_why(proj, caplog):
    _age_manifest(proj.root, engine_version=0)
    with caplog.at_level(logging.WARNING, logger="autology.retrieval"):
        answer = _search(proj)
    assert answer["trace"]["freshness"]["code_index"]["checked"] == "refreshed"
    assert answer["hits"][0]["path"] == "src/net/websocket.py"
    assert any("rebuilt from scratch (engine changed)" in r.getMessage() for r in caplog.records)
    loc, cfg = _location(proj.root)
    assert full_rebuild_reason(loc, cfg) is None


async def test_the_mcp_server_rebuilds_in_the_background(proj):
    from mcp import Client

    from autology_mcp.server.app import build_server

    _age_manifest(proj.root, engine_version=0)
    async with Client(build_server(proj.autology)) as client:
        result = await client.call_tool("autology_search", {"query": "websocket reconnect backoff", "scope": ["code"]})
    assert not result.is_error
    fresh = result.structured_content["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "rebuilding"
    _wait_for_rebuilds()


def _new_branch(proj, name="feature"):
    import subprocess

    subprocess.run(["git", "checkout", "-q", "-b", name], cwd=proj.root, check=True)
    path = proj.root / "src/net/websocket.py"
    path.write_text(path.read_text() + "\n# edited on the branch\n")  # differs from the other branch's index
    channels._locations.clear()  # the namespace is read from git at most once a second


def test_a_new_branch_is_indexed_from_another_branch_inline_in_a_cli_run(proj, caplog):
    _new_branch(proj)
    loc, cfg = _location(proj.root)
    assert not loc.exists()
    with caplog.at_level(logging.WARNING, logger="autology.retrieval"):
        answer = _search(proj)
    assert loc.exists() and "feature" in loc.namespace
    fresh = answer["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "refreshed" and "read_from" not in fresh
    assert answer["hits"][0]["path"] == "src/net/websocket.py" and not answer["hits"][0].get("stale")
    assert any("starting from br-main" in r.getMessage() for r in caplog.records)


def test_a_server_reads_another_branchs_index_while_it_builds_the_new_one(proj, monkeypatch):
    from autology_mcp.code import build as build_mod

    channels.rebuild_in_background(True)
    _new_branch(proj)
    release = threading.Event()
    real_build = build_mod.build
    monkeypatch.setattr(build_mod, "build", lambda *a, **k: (release.wait(30), real_build(*a, **k))[1])
    first = _search(proj)
    fresh = first["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "building" and fresh["read_from"].startswith("br-main--")
    hit = first["hits"][0]
    assert hit["path"] == "src/net/websocket.py" and hit["stale"] is True  # the file differs from that index
    assert "being built" in first["guidance"]
    release.set()
    _wait_for_rebuilds()
    loc, _ = _location(proj.root)
    assert loc.exists()
    after = _search(proj)
    assert "read_from" not in after["trace"]["freshness"]["code_index"]
    assert after["hits"][0]["path"] == "src/net/websocket.py" and not after["hits"][0].get("stale")


def test_a_hook_reads_another_branchs_index_and_builds_nothing(proj):
    _new_branch(proj)
    answer = search(proj.root, "websocket reconnect backoff", scope=["code"], store=proj.autology.store,
                    refresh_code=False)
    fresh = answer["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "skipped" and fresh["read_from"].startswith("br-main--")
    assert answer["hits"][0]["stale"] is True
    loc, _ = _location(proj.root)
    assert not loc.exists()


def test_a_server_indexes_many_changed_files_in_the_background(proj, monkeypatch):
    channels.rebuild_in_background(True)
    monkeypatch.setattr(channels, "DEFER_OVER", 0)  # any change counts as many
    # the rebuild waits until the first answer is out: a one-file rebuild could otherwise end before it
    answered = threading.Event()
    rebuild = channels._refresh_in_background
    monkeypatch.setattr(channels, "_refresh_in_background", lambda *a: (answered.wait(30), rebuild(*a)))
    path = proj.root / "src/net/websocket.py"
    path.write_text(path.read_text() + "\n# edited\n")
    first = _search(proj)
    answered.set()
    fresh = first["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "updating" and fresh["pending"] == 1
    assert first["hits"][0]["path"] == "src/net/websocket.py" and first["hits"][0]["stale"] is True
    assert "indexed again" in first["guidance"]
    _wait_for_rebuilds()
    after = _search(proj)
    assert after["trace"]["freshness"]["code_index"]["checked"] == "recent"
    assert after["hits"][0]["path"] == "src/net/websocket.py" and not after["hits"][0].get("stale")


def test_a_cli_run_indexes_changed_files_inline_whatever_their_number(proj, monkeypatch):
    monkeypatch.setattr(channels, "DEFER_OVER", 0)
    path = proj.root / "src/net/websocket.py"
    path.write_text(path.read_text() + "\n# edited\n")
    answer = _search(proj)
    fresh = answer["trace"]["freshness"]["code_index"]
    assert fresh["checked"] == "refreshed" and fresh["rebuilt"] == 1 and "pending" not in fresh
    assert not answer["hits"][0].get("stale")


def _without_index(tmp_path):
    p = make_project(tmp_path / "fresh", with_index=False)
    channels._locations.clear()
    return p


def _wait_for_index(loc, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not loc.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert loc.exists()


def test_a_server_starts_a_missing_index_build_of_its_own_and_says_so_meanwhile(tmp_path):
    proj = _without_index(tmp_path)
    try:
        loc, _ = _location(proj.root)
        assert not loc.exists()
        started = channels.build_missing_index(proj.root)
        assert started and "built for the first time" in started
        proc = channels._missing_index_builds[str(loc.db)]
        assert channels.build_missing_index(proj.root) == started  # one build at a time
        assert channels._missing_index_builds[str(loc.db)] is proc
        answer = search(proj.root, "websocket reconnect backoff", store=proj.autology.store)
        fresh = answer["trace"]["freshness"]["code_index"]
        assert fresh["exists"] is False and fresh["checked"] == "building"  # a process starts in far more than this took
        assert {c["status"] for c in answer["trace"]["channels"] if c["name"] in ("code_bm25", "paths")} == {"building"}
        assert "node" in {h["kind"] for h in answer["hits"]} <= {"node", "commit"}  # the knowledge answers meanwhile
        assert "built for the first time" in answer["guidance"] and "autology index build" not in answer["guidance"]
        assert proc.wait(60) == 0
        _wait_for_index(loc)
        after = _search(proj)
        assert after["trace"]["freshness"]["code_index"]["exists"] is True
        assert after["hits"][0]["path"] == "src/net/websocket.py"
        assert channels.build_missing_index(proj.root) is None  # built: nothing more to start
    finally:
        proj.autology.close()
        channels._refreshed.clear()


def test_a_servers_first_search_starts_the_first_build_if_start_up_has_not(tmp_path):
    proj = _without_index(tmp_path)
    try:
        loc, _ = _location(proj.root)
        cli = _search(proj)  # a CLI run (no background builds) starts nothing
        assert cli["trace"]["freshness"]["code_index"]["exists"] is False and str(loc.db) not in channels._missing_index_builds
        channels.rebuild_in_background(True)  # what a server's searches do
        first = _search(proj)
        assert first["trace"]["freshness"]["code_index"]["checked"] == "building"
        assert channels._missing_index_builds[str(loc.db)].wait(60) == 0
        _wait_for_index(loc)
        assert _search(proj)["hits"][0]["path"] == "src/net/websocket.py"
    finally:
        proj.autology.close()
        channels.rebuild_in_background(False)
        channels._refreshed.clear()


def test_a_first_build_that_cannot_start_leaves_the_search_answering(tmp_path, monkeypatch):
    import subprocess

    proj = _without_index(tmp_path)

    def no_process(*args, **kwargs):
        raise OSError(11, "Resource temporarily unavailable")

    try:
        monkeypatch.setattr(subprocess, "Popen", no_process)
        channels.rebuild_in_background(True)
        answer = search(proj.root, "websocket reconnect backoff", store=proj.autology.store)
        assert answer["trace"]["freshness"]["code_index"]["exists"] is False and answer["hits"]  # nodes still answer
        assert "autology index build" in answer["guidance"]
    finally:
        proj.autology.close()
        channels.rebuild_in_background(False)
        channels._not_built_unasked.clear()


def test_a_failed_first_build_is_said_once_and_not_started_again(tmp_path, monkeypatch, caplog):
    import subprocess
    import sys

    proj = _without_index(tmp_path)
    real_popen = subprocess.Popen
    started = []

    def failing_build(args, **kwargs):  # the build as a process that fails at once (git runs as it is)
        if "autology_mcp" not in args:
            return real_popen(args, **kwargs)
        started.append(args)
        return real_popen([sys.executable, "-c", "import sys; sys.exit(3)"], **kwargs)

    try:
        monkeypatch.setattr(subprocess, "Popen", failing_build)
        loc, _ = _location(proj.root)
        assert channels.build_missing_index(proj.root) is not None
        assert channels._missing_index_builds[str(loc.db)].wait(30) == 3
        with caplog.at_level(logging.WARNING, logger="autology.retrieval"):
            assert channels.build_missing_index(proj.root) is None
            assert channels.build_missing_index(proj.root) is None
        assert len(started) == 1
        assert [r.getMessage() for r in caplog.records if "first build failed" in r.getMessage()][0].count("exit status 3") == 1
        assert len([r for r in caplog.records if "first build failed" in r.getMessage()]) == 1
    finally:
        proj.autology.close()
        channels._not_built_unasked.clear()


def test_a_build_another_process_runs_counts_as_building(tmp_path):
    """A hook, or a second server, sees the first build another process runs (it holds the build lock),
    and starts none of its own."""
    from autology_mcp.code.layout import build_lock

    proj = _without_index(tmp_path)
    try:
        loc, _ = _location(proj.root)
        with build_lock(loc):
            hook = search(proj.root, "websocket reconnect backoff", store=proj.autology.store, refresh_code=False)
            assert hook["trace"]["freshness"]["code_index"]["checked"] == "building"
            assert channels.build_missing_index(proj.root) is not None and str(loc.db) not in channels._missing_index_builds
        after = search(proj.root, "websocket reconnect backoff", store=proj.autology.store, refresh_code=False)
        assert after["trace"]["freshness"]["code_index"]["checked"] != "building"  # the lock is free: no build
    finally:
        proj.autology.close()


def test_no_index_is_built_unasked_outside_git_or_when_auto_build_is_off(tmp_path, monkeypatch, caplog):
    proj = _without_index(tmp_path)
    try:
        monkeypatch.setattr(channels, "AUTO_BUILD_MAX_FILES", 2)  # a tree too large to index unasked
        with caplog.at_level(logging.WARNING, logger="autology.retrieval"):
            assert channels.build_missing_index(proj.root) is None
        assert any("is not built unasked" in r.getMessage() for r in caplog.records)
        monkeypatch.undo()
        (proj.root / ".autology" / "config.toml").write_text("[index]\nauto_build = false\n")
        assert channels.build_missing_index(proj.root) is None
        plain = tmp_path / "not-a-repo"
        (plain / "src").mkdir(parents=True)
        (plain / "src" / "a.py").write_text("def f():\n    return 1\n")
        assert channels.build_missing_index(plain) is None
        assert not channels._rebuilding
        answer = search(proj.root, "websocket reconnect backoff", store=proj.autology.store)
        assert answer["trace"]["freshness"]["code_index"]["exists"] is False
        assert "autology index build" in answer["guidance"]
        # nothing found, but the code was not searched: no push to record a decision yet
        nothing = search(proj.root, "how do we tune kubernetes autoscaling", store=proj.autology.store)
        assert nothing["verdict"] == "no_evidence" and "autology capture" not in nothing["guidance"]
        assert "once the code index is ready" in nothing["guidance"] and "autology index build" in nothing["guidance"]
        nodes_only = search(proj.root, "how do we tune kubernetes autoscaling", scope=["nodes"], store=proj.autology.store)
        assert nodes_only["verdict"] == "no_evidence" and "autology capture" in nodes_only["guidance"]
        loc, _ = _location(proj.root)
        assert not loc.exists()
    finally:
        proj.autology.close()
        channels._not_built_unasked.clear()
