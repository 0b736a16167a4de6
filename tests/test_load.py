"""Load: several real server processes on one project, each taking concurrent tool calls of every kind
(capture, update, relate, unrelate, delete, query) for a bounded time. Afterwards, with no repair step
in between: every acknowledged capture is on disk, no relation dangles, graph/index.json equals the
relations in the files, and the search index equals the files. (bench/load.py: bigger and longer.)"""

from __future__ import annotations

import pytest
from fault_kit import check_ledger, check_store, run_load

from autology_mcp.knowledge.doctor import diagnose
from autology_mcp.knowledge.service import Autology

pytestmark = pytest.mark.slow


async def test_three_processes_with_four_concurrent_calls_each_keep_every_invariant(root):
    Autology.open(root).close()
    run = await run_load(root, processes=3, concurrency=4, seconds=5.0, seed=11)
    ledger = run["ledger"]
    assert run["unexpected"] == []
    assert sum(run["counts"].values()) >= 100, run["counts"]  # the load was real
    assert all(run["counts"][op] for op in ("capture", "query", "relate", "update", "delete", "unrelate")), run["counts"]
    assert ledger.related and ledger.deleted and ledger.updates_acked
    # The invariants, straight after the load: nothing has reconciled or rebuilt anything.
    store = check_store(root)
    assert store["problems"] == []
    assert check_ledger(root, ledger) == []
    assert store["nodes"] == len(set(ledger.captured) - ledger.delete_sent)
    service = Autology.open(root)
    try:
        report = diagnose(service.store)
        assert report.ok, report.problems
        assert report.nodes == store["nodes"] and report.relations == store["relations"]
        assert len(service.query(tags=["load"], limit=100)) == min(100, store["nodes"])
    finally:
        service.close()
