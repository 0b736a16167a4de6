"""NodeStore.refresh(): cheap when a live watcher follows the files, never wrong.

Real files, real SQLite, and a real watcher in another process (``autology serve``'s NodeWatcher
holding its lease). Whatever changed behind the reader's back must be in the index after refresh():
in-place edits (no folder mtime change), new, deleted and renamed files, a git checkout, another
process's write; a dead watcher's lease is not trusted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from core_helpers import git

from autology_mcp.knowledge.lease import Lease, watched
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.store import NodeStore

WATCHER = textwrap.dedent(
    """
    import sys
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.knowledge.watch import NodeWatcher
    store = NodeStore(sys.argv[1])
    watcher = NodeWatcher(store)
    watcher.start()
    store.reconcile()
    assert watcher.hold_lease()
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    watcher.stop()
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    service = Autology.open(root)
    for i in range(30):
        service.capture(f"Component number {i}", f"Handles the part number {i}.", type="component")
    service.capture("Cache everything", "Cache everything in memory.", type="convention")
    service.close()
    return root


class Watcher:
    """A watcher process holding the lease, for the duration of a ``with`` block."""

    def __init__(self, root: Path):
        self.root = root

    def __enter__(self) -> Watcher:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WATCHER, str(self.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "ready"
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)


def titles(store: NodeStore) -> set[str]:
    return {n.title for n in store.index.all_nodes()}


def node_file(root: Path, title: str) -> Path:
    for path in (root / ".autology" / "nodes").rglob("*.md"):
        if f"title: {title}" in path.read_text() or f"title: '{title}'" in path.read_text():
            return path
    raise AssertionError(f"no file for {title!r}")


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite the file's bytes without replacing it (as VS Code and Obsidian save): the folder's mtime stays."""
    folder_mtime = path.parent.stat().st_mtime_ns
    with open(path, "r+", encoding="utf-8") as handle:
        text = handle.read().replace(old, new)
        handle.seek(0)
        handle.truncate()
        handle.write(text)
    assert path.parent.stat().st_mtime_ns == folder_mtime  # the premise: nothing at folder level moved


def eventually(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.05)


def test_without_a_watcher_an_in_place_edit_is_seen(project: Path) -> None:
    reader = NodeStore(project, verify=False)
    reader.refresh()
    assert not watched(reader.paths.cache)
    edit_in_place(node_file(project, "Cache everything"), "title: Cache everything", "title: Cache nothing")
    reader.refresh()
    assert "Cache nothing" in titles(reader) and "Cache everything" not in titles(reader)


def age_folders(root: Path, seconds: float = 60.0) -> None:
    """Set every node folder's mtime back, as if written long ago (a fresh folder is never stamped)."""
    when = time.time() - seconds
    for folder in [root / ".autology" / "nodes", *(root / ".autology" / "nodes").rglob("*")]:
        if folder.is_dir():
            os.utime(folder, (when, when))


def test_with_a_live_watcher_nothing_changed_costs_no_file_scan(project: Path) -> None:
    age_folders(project)
    reader = NodeStore(project, verify=False)
    assert reader.refresh().scanned == 31  # no stamps yet: every file
    assert reader.refresh().scanned == 31  # no watcher: every file, every time
    with Watcher(project):
        assert watched(reader.paths.cache)
        report = reader.refresh()
        assert report.scanned == 0 and report.changed == 0  # a few folder stats, no file


def test_with_a_live_watcher_an_in_place_edit_is_seen_once_the_watcher_caught_up(project: Path) -> None:
    age_folders(project)  # so that refresh lists no folder: only the watcher can bring the edit in
    reader = NodeStore(project, verify=False)
    with Watcher(project):
        reader.refresh()
        edit_in_place(node_file(project, "Cache everything"), "title: Cache everything", "title: Cache nothing")

        def seen() -> bool:
            reader.refresh()
            return "Cache nothing" in titles(reader)

        eventually(seen)


def test_with_a_live_watcher_new_deleted_and_renamed_files_are_seen_at_once(project: Path) -> None:
    reader = NodeStore(project, verify=False)
    with Watcher(project):
        reader.refresh()
        gone = node_file(project, "Component number 3")
        moved = node_file(project, "Component number 4")
        added = moved.parent / "hand-written.md"
        added.write_text(
            "---\nid: 0b6f5e2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b\ntype: concept\ntitle: Hand written\n---\n\nBy hand.\n"
        )
        gone.unlink()
        (project / ".autology" / "nodes" / "notes").mkdir()  # a new sub-folder, as Obsidian allows
        moved.rename(project / ".autology" / "nodes" / "notes" / moved.name)
        reader.refresh()  # no waiting: every one of these changed a folder's mtime
        found = titles(reader)
        assert "Hand written" in found and "Component number 3" not in found and "Component number 4" in found
        assert reader.index.node_path(moved.stem).startswith(".autology/nodes/notes/")


def test_with_a_live_watcher_another_process_write_is_seen(project: Path) -> None:
    reader = NodeStore(project, verify=False)
    with Watcher(project):
        reader.refresh()
        out = subprocess.run(
            [sys.executable, "-m", "autology_mcp", "--root", str(project), "capture", "Written elsewhere",
             "--type", "concept", "--content", "From another process."],
            capture_output=True, text=True,
        )
        assert out.returncode == 0, out.stderr
        reader.refresh()
        assert "Written elsewhere" in titles(reader)


def test_with_a_live_watcher_a_git_checkout_is_seen(project: Path) -> None:
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "nodes")
    git(project, "checkout", "-qb", "other")
    edit_in_place(node_file(project, "Cache everything"), "title: Cache everything", "title: Cache on the other branch")
    git(project, "commit", "-qam", "other title")
    git(project, "checkout", "-q", "main")
    reader = NodeStore(project, verify=False)
    reader.refresh()
    assert "Cache everything" in titles(reader)
    with Watcher(project):
        git(project, "checkout", "-q", "other")  # git replaces the file: its folder's mtime changes
        reader.refresh()
        assert "Cache on the other branch" in titles(reader) and "Cache everything" not in titles(reader)


def test_a_killed_watchers_lease_is_not_trusted(project: Path) -> None:
    reader = NodeStore(project, verify=False)
    reader.refresh()
    watcher = Watcher(project).__enter__()
    assert watched(reader.paths.cache)
    watcher.proc.send_signal(signal.SIGKILL)
    watcher.proc.wait(timeout=10)
    assert not watched(reader.paths.cache)  # the kernel dropped its lock
    assert not list((reader.paths.cache / "watchers").glob("*.lease"))  # and the stale file is gone
    edit_in_place(node_file(project, "Cache everything"), "title: Cache everything", "title: Cache nothing")
    reader.refresh()
    assert "Cache nothing" in titles(reader)


def test_readers_probing_at_once_never_mistake_each_other_for_a_watcher(project: Path) -> None:
    cache = NodeStore(project, verify=False).paths.cache
    results: list[bool] = []

    def probe() -> None:
        for _ in range(200):
            results.append(watched(cache))

    threads = [threading.Thread(target=probe) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results and not any(results)
    with Watcher(project):
        results.clear()
        threads = [threading.Thread(target=probe) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results and all(results)


def test_a_deleted_cache_means_a_full_check(project: Path) -> None:
    with Watcher(project):
        import shutil

        shutil.rmtree(project / ".autology" / "cache")  # the lease files go with it
        reader = NodeStore(project, verify=False)
        assert not watched(reader.paths.cache)
        report = reader.refresh()
        assert report.scanned == 31 and len(titles(reader)) == 31


def test_a_folder_changed_just_now_is_listed_again(project: Path) -> None:
    reader = NodeStore(project, verify=False)
    lease = Lease(reader.paths.cache)
    assert lease.acquire()  # stands in for a watcher: only folder stamps matter here
    try:
        reader.refresh()
        folder = node_file(project, "Cache everything").parent
        (folder / "new.md").write_text("---\nid: 1b6f5e2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b\ntype: concept\ntitle: New\n---\n\nNew.\n")
        reader.refresh()
        stamped = reader.index.dir_stamps()
        rel = folder.relative_to(project).as_posix()
        assert rel not in stamped  # changed within RACY_S: not stamped, so the next refresh lists it again
        assert "New" in titles(reader)
    finally:
        lease.release()
