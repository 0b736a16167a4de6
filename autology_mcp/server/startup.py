"""What ``autology serve`` does with the store besides the MCP session.

Before the session starts: open the store, start the watcher, reconcile every node file (what
changed while no server watched must be seen before the first answer). Then, in a thread, while the
session runs: the watcher lease, the hook service, SQLite's integrity check of the cache (a
damaged database is rebuilt under the store's lock), and, in a git work tree that has no code index
yet, the start of its first build, a process of its own (``[index] auto_build``); and, when semantic
recall is on here (issue 31), its model loaded (so the hooks this server answers use it) and the
vectors of session memory kept up to date in a thread of their own. Measured at 10,000
nodes, doing the reconcile in a thread too was slower to the first answer: it competed with tool
registration for the GIL.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.knowledge.store import NodeStore

log = logging.getLogger("autology.server")


@dataclass
class Startup:
    store: NodeStore
    done: threading.Event = field(default_factory=threading.Event)  # the work in the thread
    watcher: Any = None  # the NodeWatcher following the files, once started
    service: Any = None  # the HookService, once listening
    stopping: threading.Event = field(default_factory=threading.Event)  # set by finish(): background work ends


GRAPH_INDEX_DELAY = 0.25  # seconds: graph/index.json is rewritten once per burst of relation changes


def begin(root: Path, watch: bool = True) -> Startup:
    """Open the store, start the watcher and reconcile (a call must not read the store before), then
    start the rest in a thread: the lease, the hook service, the cache's integrity check."""
    store = NodeStore(root, verify=False)
    store.graph_index_delay = GRAPH_INDEX_DELAY
    store.init()
    startup = Startup(store)
    if watch:  # watch first, then reconcile: a file changed in between is not missed
        from autology_mcp.knowledge.watch import NodeWatcher

        startup.watcher = NodeWatcher(store)
        startup.watcher.start()
    store.reconcile()
    threading.Thread(target=_start_up, args=(startup,), name="autology-startup", daemon=True).start()
    return startup


def _start_up(startup: Startup) -> None:
    """Whatever fails is logged, and the server goes on without it (without the hook service, hooks
    run in-process)."""
    store = startup.store
    try:
        if startup.watcher is not None and startup.watcher.hold_lease():  # readers may now trust the watcher
            from autology_mcp.hooks.service import HookService

            startup.service = HookService(store.root)
            socket_path = startup.service.start()
            if socket_path is not None:
                startup.watcher.lease.advertise(str(socket_path))  # how the hooks find it (hooks/client.py)
                from autology_mcp.semantic import runtime

                runtime.serve_hooks(store.root, str(socket_path))  # semantic status says what these hooks do
        store.verify_cache()  # a damaged cache database is rebuilt from the files (under the store's lock)
        _build_missing_code_index(store.root)
        _keep_vectors_up_to_date(store, startup.stopping)
    except Exception:
        log.exception("start-up in the background failed; serving without what did not start")
    finally:
        startup.done.set()


def _build_missing_code_index(root: Path) -> None:
    """A git work tree whose code index was never built gets one, built by a process of its own: the
    first searches and hooks answer from the knowledge and sessions meanwhile, then with code and docs.
    (Checked on disk first, so a project that has an index imports no retrieval module here.)"""
    from autology_mcp.code import git
    from autology_mcp.common.paths import ProjectPaths

    if not git.is_repo(root) or any((ProjectPaths(root).cache / "index").glob("*/manifest.json")):
        return
    from autology_mcp.retrieval import channels

    channels.build_missing_index(root)  # it says on stderr what it started, and when it is done


VECTOR_CHECK_S = 20.0  # how often the vectors thread looks whether session memory or the nodes changed


def _keep_vectors_up_to_date(store: NodeStore, stopping: threading.Event) -> None:
    """With semantic recall on here: a thread that loads the model and embeds session turns and knowledge
    nodes that have no vector yet, at start and whenever session memory's files or the nodes change
    (checked every VECTOR_CHECK_S)."""
    from autology_mcp.semantic.state import enabled_here

    root = store.root
    if not enabled_here(root):
        return

    def run() -> None:
        from autology_mcp.semantic.nodes import sync_node_vectors
        from autology_mcp.semantic import runtime
        from autology_mcp.sessions.paths import sessions_dir
        from autology_mcp.sessions.semantic import sync_turn_vectors

        seen = nodes_seen = None
        while not stopping.is_set():
            generation = store.index.generation()
            if generation != nodes_seen and _embedded(
                    "knowledge node piece(s)", lambda: sync_node_vectors(root, store.index, should_stop=stopping.is_set)):
                nodes_seen = generation
            folder = sessions_dir(root)
            signature = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.glob("*.jsonl")) \
                if folder.is_dir() else []
            if signature != seen and _embedded(
                    "session turn(s)", lambda: sync_turn_vectors(root, should_stop=stopping.is_set)):
                seen = signature
            runtime.publish()  # the hooks' measure, fresh for semantic status in other processes
            stopping.wait(VECTOR_CHECK_S)

    threading.Thread(target=run, name="autology-vectors", daemon=True).start()


def _embedded(what: str, sync: Callable[[], int | None]) -> bool:
    """One sync of the vectors of ``what``, logged; whether it ran to its end (if not, it is tried again)."""
    try:
        done = sync()
    except Exception:  # noqa: BLE001 - the vectors are a cache: search ranks lexically without them
        log.exception("semantic recall: embedding %s failed", what)
        return False
    if done:
        log.info("semantic recall: %d %s embedded", done, what)
    return True


def finish(startup: Startup) -> None:
    """Stop the hook service, the vectors thread and the watcher, and close the store."""
    startup.stopping.set()
    startup.done.wait(timeout=30)
    if startup.service is not None:
        from autology_mcp.semantic import runtime

        runtime.stop_serving_hooks(startup.store.root)
        startup.service.stop()
    if startup.watcher is not None:
        startup.watcher.stop()
    startup.store.close()
