"""Notice node files changed behind the server's back (Obsidian, ``git checkout``, another process).

A watchdog observer on ``.autology/nodes/`` hands every file event to ``NodeStore.sync_path``,
which re-reads the file only when its mtime or size changed. A directory event (a folder moved or
removed) triggers a full, still cheap, ``reconcile``. Errors are logged, never raised: a watcher
must not take the server down.

Once the server's start-up reconcile is done, the watcher holds a lease
(:mod:`autology_mcp.knowledge.lease`) that tells other processes (hooks, the CLI) that in-place
edits are being followed, so they need not stat every node file; it is dropped when the watcher
stops or its thread is found dead.
"""

from __future__ import annotations

import logging

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from autology_mcp.knowledge.lease import Lease
from autology_mcp.knowledge.store import NodeStore

log = logging.getLogger("autology.watch")

# Only changes. Without a filter inotify also reports every open and close-without-write, so a
# reconcile or rebuild reading 10,000 node files floods the watcher thread and runs twice as slow.
CHANGE_EVENTS = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class _Handler(FileSystemEventHandler):
    def __init__(self, store: NodeStore):
        self.store = store

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        try:
            if event.is_directory:
                if event.event_type in ("moved", "deleted", "created"):
                    self.store.reconcile()
                return
            for path in (event.src_path, getattr(event, "dest_path", "")):
                if path and str(path).endswith(".md"):
                    self.store.sync_path(path)
        except Exception:  # noqa: BLE001 - keep watching whatever one event did
            log.exception("failed to process file event %s on %s", event.event_type, event.src_path)


class _BaseHandler(FileSystemEventHandler):
    """Watches ``.autology/`` itself (not recursively: cache/ is busy) for nodes/ coming back.

    A ``git checkout`` of a branch without node files removes nodes/, and the recursive watch on it
    ends with it; when a later checkout brings the folder back, watch it again and reconcile.
    """

    def __init__(self, watcher: NodeWatcher):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        nodes = str(self.watcher.store.paths.nodes)
        if not event.is_directory or nodes not in (event.src_path, getattr(event, "dest_path", "")):
            return
        try:
            if event.event_type in ("created", "moved"):
                self.watcher.watch_nodes()
            self.watcher.store.reconcile()
        except Exception:  # noqa: BLE001 - keep watching whatever one event did
            log.exception("failed to process folder event %s on %s", event.event_type, event.src_path)


class NodeWatcher:
    def __init__(self, store: NodeStore):
        self.store = store
        self._observer: Observer | None = None
        self._nodes_watch = None
        self.lease = Lease(store.paths.cache)

    @property
    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def hold_lease(self) -> bool:
        """Tell other processes this store is watched. Call it only once the files were reconciled
        after :meth:`start`: the lease promises that nothing before it was missed."""
        return self.alive and self.lease.acquire()

    def check(self) -> None:
        """Drop the lease if the watcher died; take it again if it was lost with a deleted cache
        folder (the caller has reconciled the rebuilt cache). Cheap: meant for every request."""
        if not self.alive:
            if self.lease.held:
                log.error("the file watcher stopped; other processes will check every node file themselves")
            self.lease.release()
        elif not self.lease.held:
            self.lease.acquire()

    def start(self) -> None:
        self.store.paths.nodes.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.daemon = True
        self._observer = observer
        self.watch_nodes()
        observer.schedule(_BaseHandler(self), str(self.store.paths.base), recursive=False, event_filter=CHANGE_EVENTS)
        observer.start()

    def watch_nodes(self) -> None:
        """(Re)start the recursive watch on nodes/ (its old one ended if the folder was removed)."""
        if self._observer is None or not self.store.paths.nodes.is_dir():
            return
        if self._nodes_watch is not None:
            try:
                self._observer.unschedule(self._nodes_watch)
            except KeyError:
                pass
        self._nodes_watch = self._observer.schedule(
            _Handler(self.store), str(self.store.paths.nodes), recursive=True, event_filter=CHANGE_EVENTS
        )

    def stop(self) -> None:
        self.lease.release()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
