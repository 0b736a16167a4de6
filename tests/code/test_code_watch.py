"""The server's file watch: a search skips re-checking every file only when no file changed, and a
change made a moment before a search is always seen (Linux: inotify)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from code_fixtures import git, write

from autology_mcp.code import service
from autology_mcp.code.config import IndexConfig
from autology_mcp.code.watch import IndexWatch, open_watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
PRUNE = set(IndexConfig().prune_dirs)


def search(root: Path, watch: IndexWatch, query: str) -> tuple[list[str], dict]:
    r = service.code_search(root, query, top=5, watch=watch)
    return [h["path"] for h in r["hits"]], r["trace"]["refresh"]


def test_generation_counts_changes_and_nothing_else(repo: Path):
    tree = open_watch(repo, PRUNE)
    assert tree is not None
    try:
        g0 = tree.generation()
        (repo / "src/app/websocket.py").read_text()  # reading is no change
        os.stat(repo / "src/app/websocket.py")
        assert tree.generation() == g0
        write(repo, "node_modules/pkg/index.js", "x = 1\n")  # a pruned folder: never indexed
        write(repo, "src/__pycache__/x.pyc", "junk")
        assert tree.generation() == g0
        write(repo, "scripts/build", "#!/bin/bash\necho build\n")  # a file named like a pruned folder counts
        g0b = tree.generation()
        assert g0b > g0
        g0 = g0b
        write(repo, "src/app/websocket.py", "def changed():\n    pass\n")  # in place
        g1 = tree.generation()
        assert g1 > g0
        write(repo, "src/brand/new/deep/module.py", "def fresh():\n    pass\n")  # new folders, watched from now on
        g2 = tree.generation()
        assert g2 > g1
        write(repo, "src/brand/new/deep/module.py", "def fresher():\n    pass\n")
        assert tree.generation() > g2
        g3 = tree.generation()
        git(repo, "add", "src/brand/new/deep/module.py")  # git's index: the tracked set changed
        assert tree.generation() > g3
    finally:
        tree.close()


def test_a_search_checks_the_files_only_after_a_change(repo: Path):
    watch = IndexWatch(repo)
    try:
        hits, refresh = search(repo, watch, "reconnect websocket timeout")
        assert refresh["mode"] == "full" and hits[0] == "src/app/websocket.py"
        hits, refresh = search(repo, watch, "reconnect websocket timeout")
        assert refresh["mode"] == "unchanged" and hits[0] == "src/app/websocket.py"

        write(repo, "src/app/billing.py", "def issue_credit_note(invoice):\n    return invoice\n")
        hits, refresh = search(repo, watch, "credit note")  # written a moment before: seen
        assert refresh["rebuilt"] == 1 and hits[0] == "src/app/billing.py"
        assert search(repo, watch, "credit note")[1]["mode"] == "unchanged"

        write(repo, "lib/new/zeppelin.py", "def zeppelin_surcharge():\n    return 7\n")  # in a new folder
        git(repo, "add", "lib/new/zeppelin.py")  # the index covers tracked files
        hits, refresh = search(repo, watch, "zeppelin surcharge")
        assert refresh["rebuilt"] == 1 and hits[0] == "lib/new/zeppelin.py"
        write(repo, "lib/new/airship.py", "def airship_levy():\n    return 8\n")  # that folder is watched now
        git(repo, "add", "lib/new/airship.py")
        assert search(repo, watch, "airship levy")[0][0] == "lib/new/airship.py"

        os.rename(repo / "lib", repo / "moved")  # a moved folder: watched afresh under its new name
        git(repo, "add", "-A", "lib", "moved")  # and the move staged
        hits, refresh = search(repo, watch, "zeppelin surcharge")
        assert refresh["deleted"] == 2 and hits[0] == "moved/new/zeppelin.py"
        write(repo, "moved/new/balloon.py", "def balloon_tariff():\n    return 9\n")
        git(repo, "add", "moved/new/balloon.py")
        assert search(repo, watch, "balloon tariff")[0][0] == "moved/new/balloon.py"

        shutil.rmtree(repo / "moved")
        hits, refresh = search(repo, watch, "balloon tariff")
        assert refresh["deleted"] == 3 and "moved/new/balloon.py" not in hits

        (repo / ".autology" / "config.toml").write_text("[index]\ncode_max_lines = 30\n")  # settings: checked
        assert search(repo, watch, "credit note")[1]["mode"] == "full"
        shutil.rmtree(repo / ".autology" / "cache")  # the index deleted behind the server's back: rebuilt
        assert search(repo, watch, "credit note")[1]["mode"] == "full"
    finally:
        watch.close()


def test_a_branch_switch_is_checked(repo: Path):
    watch = IndexWatch(repo)
    try:
        search(repo, watch, "invoice total")
        git(repo, "checkout", "-q", "-b", "feature")  # no file changed, but another namespace
        hits, refresh = search(repo, watch, "invoice total")
        assert refresh["mode"] != "unchanged"
        assert search(repo, watch, "invoice total")[1]["mode"] == "unchanged"
    finally:
        watch.close()


def test_an_overflowed_queue_means_check_everything(repo: Path):
    tree = open_watch(repo, PRUNE)
    try:
        g0 = tree.generation()
        assert tree._event(-1, 0x4000, "") is True  # IN_Q_OVERFLOW: events were lost
        assert tree.generation() > g0
    finally:
        tree.close()


def test_without_a_watch_every_search_checks(repo: Path, monkeypatch):
    monkeypatch.setattr("autology_mcp.code.watch._libc", lambda: None)  # not Linux, or no inotify
    watch = IndexWatch(repo)
    search(repo, watch, "invoice total")
    assert search(repo, watch, "invoice total")[1]["mode"] == "incremental"


def test_too_many_folders_for_the_watch_limit_falls_back(repo: Path, monkeypatch):
    from autology_mcp.code import watch as watch_mod

    def refuse(self, path):
        raise watch_mod.WatchFailed(f"inotify_add_watch {path}: No space left on device")

    monkeypatch.setattr(watch_mod.TreeWatch, "_add", refuse)
    assert open_watch(repo, PRUNE) is None
    watch = IndexWatch(repo)
    search(repo, watch, "invoice total")
    assert search(repo, watch, "invoice total")[1]["mode"] == "incremental"



def test_a_dropped_watch_frees_its_inotify_instance(repo: Path):
    import gc

    def inotify_fds() -> int:
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
            except OSError:  # the listing's own fd, closed already
                pass
        return count

    gc.collect()  # watches of earlier tests, dropped already
    before = inotify_fds()
    for _ in range(5):
        watch = IndexWatch(repo)
        assert watch.tree(PRUNE) is not None
        del watch
    gc.collect()
    assert inotify_fds() == before
