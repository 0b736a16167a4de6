"""Faults: a server killed with SIGKILL in the middle of writes, a full disk, permission denied, a file
size limit, a corrupted or deleted cache database. Nothing acknowledged is lost, no node file is ever
partial, a failed write is a StorageError that leaves the store as it was, and the derived indexes
rebuild by themselves. (bench/faults.py runs the kill loop for longer and prints the counts.)"""

from __future__ import annotations

import errno
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
from core_helpers import adr, snapshot
from fault_kit import Ledger, RawServer, check_ledger, check_store, kill_iteration, result_text, temp_files_left

from autology_mcp.common import fsutil
from autology_mcp.common.errors import StorageError
from autology_mcp.knowledge.service import Autology

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------------------ kill -9 mid-write


def test_kill_9_in_the_middle_of_writes_loses_nothing_acknowledged(root):
    rng = random.Random(7)
    ledger = Ledger()
    runs = []
    for iteration in range(6):
        run = kill_iteration(root, rng, ledger, iteration, burst=16)
        assert run["problems"] == [], run  # no partial node file, no stray file, graph index whole JSON
        assert check_ledger(root, ledger) == []  # nothing acknowledged lost, right after the kill
        runs.append(run)
    assert any(r["in_flight"] for r in runs), runs  # some kills did land while requests were being served
    assert len(ledger.captured) >= 3
    # a fresh server rebuilds what the kills left stale, and answers from it
    server = RawServer(root)
    try:
        server.initialize()
        status = server.call_and_wait("autology_status", {})
        hits = server.call_and_wait("autology_query", {"tags": ["fault"], "limit": 100})
    finally:
        server.close()
    nodes = check_store(root)
    assert nodes["problems"] == []  # graph index and search index equal the files, nothing dangles
    assert status["structuredContent"]["totalNodes"] == nodes["nodes"]
    assert status["structuredContent"]["malformedFiles"] == []
    assert len(hits["structuredContent"]["result"]) == min(100, nodes["nodes"])
    assert check_ledger(root, ledger) == []


# ------------------------------------------------------------------------------ disk full, permission denied


def _fail(exc_errno: int, only=None):
    def fail(*args, **kwargs):
        if only is None or only(*args):
            raise OSError(exc_errno, os.strerror(exc_errno))
        return ORIGINAL[fail.name](*args, **kwargs)

    return fail


ORIGINAL = {"fsync": os.fsync, "replace": os.replace, "unlink": os.unlink, "mkstemp": tempfile.mkstemp}

# Where the operating system says no, at the fsutil boundary: creating the temporary file, flushing it
# to disk (where a full disk shows on delayed allocation), renaming it into place, removing a file.
INJECTIONS = {
    "disk full at fsync": ("fsync", errno.ENOSPC, None, "no space left on device"),
    "disk full creating the temp file": ("mkstemp", errno.ENOSPC, None, "no space left on device"),
    "permission denied on rename": ("replace", errno.EACCES, None, "permission denied"),
    "operation not permitted on rename": ("replace", errno.EPERM, None, "permission denied"),
    "permission denied on unlink": ("unlink", errno.EACCES, None, "permission denied"),
    "read-only file system": ("mkstemp", errno.EROFS, None, "read-only file system"),
}


def _inject(monkeypatch, name: str) -> str:
    target, code, only, reason = INJECTIONS[name]
    fail = _fail(code, only)
    fail.name = target
    if target == "mkstemp":
        monkeypatch.setattr(fsutil.tempfile, "mkstemp", fail)
    else:
        monkeypatch.setattr(fsutil.os, target, fail)
    return reason


def _seed(autology):
    a = autology.capture("Alpha", "alpha words", type="concept", tags=["seed"]).id
    b = autology.capture("Beta", "beta words", type="component").id
    c = autology.capture("Gamma", "gamma words", type="pattern").id
    autology.relate(a, b, "uses")
    autology.relate(c, b, "depends_on")
    return a, b, c


OPERATIONS = {  # name -> (call, the file-system calls it needs: a node file write and/or an unlink)
    "capture": (lambda s, a, b, c: s.capture("New node", "new words", type="concept"), {"write"}),
    "capture decision": (lambda s, a, b, c: s.capture("New decision", adr(), type="decision"), {"write"}),
    "update": (lambda s, a, b, c: s.update(a, content="changed words", tags=["changed"]), {"write"}),
    "relate": (lambda s, a, b, c: s.relate(b, c, "affects", description="b affects c"), {"write"}),
    "unrelate": (lambda s, a, b, c: s.unrelate(a, b, "uses"), {"write"}),
    "delete with incoming relations": (lambda s, a, b, c: s.delete(b), {"write", "unlink"}),
    "delete": (lambda s, a, b, c: s.delete(a), {"unlink"}),
}


def _same_store(snap: dict[str, bytes]) -> dict[str, bytes]:
    """A snapshot with graph/index.json's lastUpdated stamp blanked (rewritten with the same relations)."""
    import re

    key = ".autology/graph/index.json"
    return snap | {key: re.sub(rb'"lastUpdated": "[^"]*"', b'"lastUpdated": ""', snap[key])} if key in snap else snap


@pytest.mark.parametrize("injection", list(INJECTIONS))
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_refused_write_is_a_storage_error_and_the_store_is_unchanged(autology, root, monkeypatch, injection, operation):
    a, b, c = _seed(autology)
    call, needs = OPERATIONS[operation]
    refused = ("unlink" if INJECTIONS[injection][0] == "unlink" else "write") in needs
    before, status_before = snapshot(root), autology.status()
    with monkeypatch.context() as patch:
        reason = _inject(patch, injection)
        if refused:
            with pytest.raises(StorageError) as info:
                call(autology, a, b, c)
            assert info.value.reason.endswith(reason) and info.value.path.startswith(str(root)), info.value
        else:  # the operation never needs the refused call: it works (graph/index.json may lag, see below)
            call(autology, a, b, c)
    if refused:
        assert _same_store(snapshot(root)) == _same_store(before)  # every node file byte as it was
        assert autology.status() == status_before
        assert check_store(root)["problems"] == []  # the index still equals the files
        call(autology, a, b, c)  # once the fault is gone, the same call works
    assert temp_files_left(root) == []
    autology.store.reconcile()
    assert check_store(root)["problems"] == []


@pytest.mark.parametrize("operation", ["relate", "unrelate", "delete with incoming relations"])
def test_a_graph_index_that_cannot_be_rewritten_does_not_fail_a_written_change(autology, root, monkeypatch, operation):
    """graph/index.json is derived (and gitignored): once the node files are written, the change stands;
    the stale index is rewritten by the next reconcile (at the latest, the next server start)."""
    a, b, c = _seed(autology)
    with monkeypatch.context() as patch:
        fail = _fail(errno.ENOSPC, only=lambda src, dst: str(dst).endswith("index.json"))
        fail.name = "replace"
        patch.setattr(fsutil.os, "replace", fail)
        OPERATIONS[operation][0](autology, a, b, c)
        assert [p for p in check_store(root)["problems"] if not p.startswith("graph index differs")] == []
    assert autology.store.reconcile().graph_index_rewritten
    assert check_store(root)["problems"] == []


def test_every_fault_is_reported_through_the_server_and_it_keeps_serving(connect, autology, root, monkeypatch):
    a, b, c = _seed(autology)
    import anyio

    async def scenario():
        async with connect() as client:
            with monkeypatch.context() as patch:
                _inject(patch, "disk full at fsync")
                result = await client.call_tool("autology_capture", {"title": "T", "content": "c", "type": "concept"})
                assert result.is_error
                assert "Storage error at" in result.content[0].text and "no space left on device" in result.content[0].text
            ok = await client.call_tool("autology_capture", {"title": "T", "content": "c", "type": "concept"})
            assert not ok.is_error

    anyio.run(scenario)
    assert autology.status().totalNodes == 4


FSIZE_WORKER = r"""
import json, resource, signal, sys
from autology_mcp.common.errors import StorageError
from autology_mcp.knowledge.service import Autology

root, limit = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # then writes past the limit fail with EFBIG
autology = Autology.open(root)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
out = {}
try:
    autology.capture("Too big for this file system", "x" * (limit + 10_000), type="concept")
    out["big"] = "written"
except StorageError as exc:
    out["big"] = exc.reason
out["small"] = autology.capture("Small", "fits", type="concept").id
autology.close()
print(json.dumps(out))
"""


def test_a_real_file_size_limit_refuses_the_write_and_leaves_the_store_unchanged(autology, root, capture):
    """Not a simulation: the kernel refuses the write (RLIMIT_FSIZE, EFBIG) in a child process."""
    import json

    capture("Existing", "existing words")
    autology.close()
    before = snapshot(root)
    proc = subprocess.run(
        [sys.executable, "-c", FSIZE_WORKER, str(root), "150000"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["big"] == "File too large"
    after = snapshot(root)
    added = set(after) - set(before)
    assert {k: v for k, v in after.items() if k in before} == before
    assert [p.rsplit("/", 1)[1] for p in added] == [f"{out['small']}.md"]
    assert temp_files_left(root) == []
    assert check_store(root)["problems"] == []


# ------------------------------------------------------------------------------ the cache database


def test_a_cache_database_corrupted_in_place_while_a_server_runs(root):
    """Garbage written over the database file (same inode) under a running server: the server keeps
    answering correctly (SQLite serves from its cache and WAL), and the next start rebuilds the file."""
    service = Autology.open(root)
    ids = [service.capture(f"Node {i}", f"words {i} shared", type="concept").id for i in range(5)]
    service.close()
    server = RawServer(root)
    try:
        server.initialize()
        assert server.call_and_wait("autology_status", {})["structuredContent"]["totalNodes"] == 5
        db = root / ".autology" / "cache" / "nodes.sqlite"
        with open(db, "r+b") as handle:
            handle.write(b"garbage!" * 4096)
        hits = server.call_and_wait("autology_query", {"query": "shared"})
        added = server.call_and_wait("autology_capture", {"title": "After", "content": "after", "type": "concept"})
        status = server.call_and_wait("autology_status", {})
    finally:
        server.close()
    assert not added.get("isError"), result_text(added)
    assert not hits.get("isError"), result_text(hits)
    assert sorted(h["node"]["id"] for h in hits["structuredContent"]["result"]) == sorted(ids)
    assert status["structuredContent"]["totalNodes"] == 6
    server = RawServer(root)
    try:
        server.initialize()
        after = server.call_and_wait("autology_query", {"query": "after"})
    finally:
        server.close()
    assert [h["node"]["title"] for h in after["structuredContent"]["result"]] == ["After"]
    assert check_store(root)["problems"] == []


@pytest.mark.parametrize("damage", ["deleted", "garbage", "empty", "wal left by a kill"])
def test_a_damaged_cache_database_is_rebuilt_when_the_server_starts(root, damage):
    service = Autology.open(root)
    a = service.capture("Alpha", "alpha words", type="concept").id
    b = service.capture("Beta", "beta words", type="concept").id
    service.relate(a, b, "uses")
    service.close()
    cache = root / ".autology" / "cache"
    if damage == "deleted":
        shutil.rmtree(cache)
    elif damage == "garbage":
        (cache / "nodes.sqlite").write_bytes(os.urandom(8192))
    elif damage == "empty":
        (cache / "nodes.sqlite").write_bytes(b"")
    else:
        ledger = Ledger()
        kill_iteration(root, random.Random(3), ledger, 0, burst=8)
    server = RawServer(root)
    try:
        server.initialize()
        hits = server.call_and_wait("autology_query", {"query": "alpha"})
    finally:
        server.close()
    assert [h["node"]["id"] for h in hits["structuredContent"]["result"]] == [a]
    assert check_store(root)["problems"] == []


def test_temporary_files_left_by_killed_writes_are_removed_at_the_next_start(root):
    Autology.open(root).close()
    old = time.time() - 3600
    left = [root / ".autology" / "cache" / ".abc.md.x1y2.tmp", root / ".autology" / "graph" / ".index.json.z9.tmp"]
    fresh = root / ".autology" / "cache" / ".def.md.live.tmp"  # a write another process is doing right now
    for path in [*left, fresh]:
        path.write_text("half")
    for path in left:
        os.utime(path, (old, old))
    keep = root / ".autology" / "cache" / "notes.tmp"  # not ours: not hidden
    keep.write_text("x")
    os.utime(keep, (old, old))
    Autology.open(root).close()
    assert [p.exists() for p in left] == [False, False]
    assert fresh.exists() and keep.exists()
