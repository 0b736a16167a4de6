"""Atomic writes, storage errors with path and reason, and the write lock (autology_mcp.common.fsutil),
plus the graph index file format (autology_mcp.knowledge.graph)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime

import pytest

from autology_mcp.common.errors import StorageError
from autology_mcp.common.fsutil import WriteLock, atomic_write, read_text, remove_file
from autology_mcp.knowledge.graph import read_graph_index, render_graph_index
from autology_mcp.knowledge.models import RelationRecord, new_id


def test_atomic_write_replaces_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "sub" / "file.md"
    atomic_write(target, "one\n")
    stat = atomic_write(target, "two\n")
    assert target.read_text() == "two\n"
    assert stat.st_size == 4
    assert [p.name for p in target.parent.iterdir()] == ["file.md"]


def test_atomic_write_failure_is_a_storage_error_with_path_and_reason(tmp_path):
    target = tmp_path / "is-a-directory"
    (target / "child").mkdir(parents=True)
    with pytest.raises(StorageError) as info:
        atomic_write(target, "x")
    assert info.value.path == str(target)
    assert info.value.reason
    assert [p.name for p in target.parent.iterdir()] == ["is-a-directory"]  # temp file cleaned up


def test_read_text_errors(tmp_path):
    with pytest.raises(StorageError, match="No such file"):
        read_text(tmp_path / "missing.md")
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(StorageError, match="not UTF-8"):
        read_text(bad)
    crlf = tmp_path / "crlf.md"
    crlf.write_bytes(b"a\r\nb")
    assert read_text(crlf) == "a\r\nb"


def test_remove_file(tmp_path):
    path = tmp_path / "x"
    path.write_text("x")
    remove_file(path)
    remove_file(path)  # a missing file is fine
    assert not path.exists()


def test_write_lock_is_reentrant_and_excludes_threads(tmp_path):
    lock = WriteLock(tmp_path / "cache" / "write.lock")
    events: list[str] = []
    inside = threading.Event()
    release = threading.Event()

    def holder():
        with lock.hold():
            with lock.hold():  # re-entrant
                events.append("holder in")
                inside.set()
                release.wait(10)
                events.append("holder out")

    def waiter():
        inside.wait(10)
        with lock.hold():
            events.append("waiter in")

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    for t in threads:
        t.start()
    inside.wait(10)
    release.set()
    for t in threads:
        t.join(10)
    assert events == ["holder in", "holder out", "waiter in"]


def test_write_lock_excludes_another_process(tmp_path):
    lock_path = tmp_path / "write.lock"
    lock = WriteLock(lock_path)
    script = (
        "import fcntl, os, sys\n"
        f"fd = os.open({str(lock_path)!r}, os.O_RDWR)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('acquired')\n"
        "except BlockingIOError:\n    print('blocked')\n"
    )
    with lock.hold():
        inside = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    outside = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert (inside.stdout.strip(), outside.stdout.strip()) == ("blocked", "acquired")


def test_directory_write_lock_excludes_another_process_and_survives_cache_deletion(tmp_path):
    """The store locks the .autology/ directory itself: deleting cache/ cannot break the lock."""
    base = tmp_path / ".autology"
    (base / "cache").mkdir(parents=True)
    lock = WriteLock(base, directory=True)
    script = (
        "import fcntl, os, sys\n"
        f"fd = os.open({str(base)!r}, os.O_RDONLY | os.O_DIRECTORY)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('acquired')\n"
        "except BlockingIOError:\n    print('blocked')\n"
    )
    with lock.hold():
        (base / "cache").rmdir()
        inside = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    outside = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert (inside.stdout.strip(), outside.stdout.strip()) == ("blocked", "acquired")


def test_graph_index_format_is_deterministic(tmp_path):
    a, b, c = sorted(new_id() for _ in range(3))
    relations = [
        RelationRecord(source=b, target=c, type="uses"),
        RelationRecord(source=a, target=c, type="affects", description="d", confidence=0.9),
        RelationRecord(source=a, target=b, type="affects"),
    ]
    when = datetime(2026, 2, 8, 12, tzinfo=UTC)
    text = render_graph_index(relations, when)
    assert text == render_graph_index(list(reversed(relations)), when)
    data = json.loads(text)
    assert data["version"] == "1.0" and data["lastUpdated"] == "2026-02-08T12:00:00Z"
    assert data["relations"][0] == {"source": a, "target": b, "type": "affects", "confidence": 0.8}
    assert data["relations"][1] == {"source": a, "target": c, "type": "affects", "description": "d", "confidence": 0.9}
    path = tmp_path / "index.json"
    path.write_text(text)
    assert read_graph_index(path) == sorted(relations, key=lambda r: (r.source, r.type.value, r.target))
    assert json.loads(render_graph_index([], when))["relations"] == []


@pytest.mark.parametrize("text", ["", "{", "[]", '{"version": "2"}', '{"version": "1.0"}', '{"version": "1.0", "relations": [1]}'])
def test_unreadable_graph_index_reads_as_none(tmp_path, text):
    path = tmp_path / "index.json"
    path.write_text(text)
    assert read_graph_index(path) is None
    assert read_graph_index(tmp_path / "missing.json") is None
