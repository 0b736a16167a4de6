"""The node store: Markdown files under ``.autology/nodes/`` are the truth; everything else is derived.

Writes go file first (atomic, fsync'ed), then the derived SQLite index, then ``graph/index.json``
when a relation changed (atomic, not fsync'ed: derived), all inside one cross-process write lock. Files changed behind the store's back
(an Obsidian edit, ``git checkout``, another process) are picked up by :meth:`NodeStore.reconcile`
(a cheap mtime/size scan, run at start) and :meth:`NodeStore.sync_path` (called by the watcher).
A file that cannot be read as a node (no front matter, YAML that does not parse) is recorded with its
reason, skipped, and never rewritten; one that parses but breaks a write rule (a long title, an unknown
type) is a node, read and written back as the person wrote it (knowledge/rules.py).
"""

from __future__ import annotations

import bisect
import logging
import os
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from autology_mcp.common.config import section
from autology_mcp.common.errors import NotFoundError, StorageError, ValidationError
from autology_mcp.common.fsutil import WriteLock, atomic_write, read_text, remove_file
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.common.sqlite import is_damaged
from autology_mcp.knowledge.lease import watched
from autology_mcp.knowledge.graph import (
    build_graph,
    read_graph_index,
    relation_keys,
    relation_line,
    render_graph_index_lines,
)
from autology_mcp.knowledge.markdown import (
    MAX_NODE_FILE_BYTES,
    MalformedNodeError,
    parse_node,
    related_line,
    render_node,
    with_relation,
    with_relation_replaced,
)
from autology_mcp.knowledge.models import FINGERPRINT_KEY, NODE_TYPES, KnowledgeNode, Relation, utc_now, validate_id
from autology_mcp.knowledge.node_index import RELATIONS_APART, NodeIndex
from autology_mcp.knowledge.rules import settle

if TYPE_CHECKING:
    import networkx as nx

log = logging.getLogger("autology.store")

GITIGNORE = (
    "# Derived data: rebuilt from nodes/ at any time (autology rebuild)\ncache/\ngraph/\n"
    "# Session memory: redacted transcripts of this machine's sessions (private, never committed)\nsessions/\n"
    "# This machine's own: reviews of node text (autology review), setup backups (autology setup)\nlocal/\n"
)


@dataclass
class ReconcileReport:
    scanned: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    malformed: list[tuple[str, str]] = field(default_factory=list)
    graph_index_rewritten: bool = False

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


RACY_S = 2.0  # a folder changed more recently than this is not stamped: listed again next time
# After a reconcile that indexed this many files (a rebuild, a first start, a large pull), the full-text
# indexes are merged into one segment each: a query then walks one list per term instead of merging
# dozens (1.5-1.8x faster walks at 100k nodes; about 1.5 s there).
OPTIMIZE_FROM_FILES = 1000
# A node with this many relations (a hub) keeps, in memory, the text this process last wrote for it
# (at most RENDERS_KEPT of them): one more relation, or a change of one it has, is then spliced into
# that text, the index's rows and graph/index.json's lines, with no decode or render of the others
# (store.add_relation).
HUB_RELATIONS = RELATIONS_APART  # the index keeps a hub's relations in their rows only (node_index)
RENDERS_KEPT = 8
_STAMP_TIME = datetime(2000, 1, 1, tzinfo=UTC)
_STAMP_LINE = '  "lastUpdated": "2000-01-01T00:00:00Z",'
_LAST_UPDATED = re.compile(r'^  "lastUpdated": "[^"\n]*",$', re.MULTILINE)


def _file_time(stat: os.stat_result) -> datetime:
    """A file's mtime, to the millisecond: the ``modified`` of a hand-written node file that has none."""
    return datetime.fromtimestamp(stat.st_mtime_ns // 1_000_000 / 1000, UTC)


_UUID_NAME = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.md$")


def _graph_stamp(relations_generation: int, stat: os.stat_result) -> str:
    return f"{relations_generation}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ino}"


class NodeStore:
    """CRUD over node files, with the derived index kept in step."""

    def __init__(self, root: Path | str, durable: bool = True, verify: bool = True):
        self.paths = ProjectPaths(Path(root).resolve())
        self.root = self.paths.root
        self.durable = durable
        self.lock = WriteLock(self.paths.lock_dir, directory=True)
        self._graph: nx.MultiDiGraph | None = None
        self._graph_generation = -1
        self._graph_lock = threading.Lock()
        # graph/index.json after a relation change: written at once (0), or this many seconds later,
        # once for a whole burst of changes (the server sets it: a relate then costs no 2.8 MB write
        # at 10k nodes). Unwritten changes leave the file unstamped, so a crash before the write
        # means a rewrite at the next start, never a stamped but wrong file.
        self.graph_index_delay = 0.0
        self._graph_timer: threading.Timer | None = None
        self._graph_timer_lock = threading.Lock()
        # The lines of graph/index.json per source node, in order, as of index generation
        # _lines_generation. Kept in step with this process's own commits, so that a relation change
        # rewrites the file without re-reading and re-rendering every relation; rebuilt from the
        # index whenever another process (or any other transaction) changed it in between.
        self._line_sources: list[str] | None = None  # sorted source ids having relations
        # Each source's lines, parallel to _line_sources: joined, or for a hub (HUB_RELATIONS or more)
        # a list of (type, target, line) in order, so that one more relation is an insertion.
        self._line_chunks: list[str | list[tuple[str, str, str]]] = []
        self._hub_lines = False  # whether some chunk may be a list (else all are strings, passed as they are)
        self._lines_generation = -1
        # node id -> (path, mtime_ns, size, text as UTF-8, relations, the byte offset where the next
        # relation's item goes or None) of a hub's file as this process last wrote it
        self._renders: OrderedDict[str, tuple[str, int, int, bytes, int, int | None]] = OrderedDict()
        self.index = self._open_index(verify)
        self._db_id = self._db_identity()

    # ------------------------------------------------------------------ setup

    @cached_property
    def max_file_bytes(self) -> int:
        """The size over which a node file is skipped as malformed, unread:
        ``[tool.autology.store] max_node_file_bytes`` (default 4 MiB; docs/limits.md)."""
        try:
            value = section(self.root, "store").get("max_node_file_bytes", MAX_NODE_FILE_BYTES)
        except (ValidationError, StorageError) as exc:
            log.warning("%s; node files are capped at %s bytes", exc, MAX_NODE_FILE_BYTES)
            return MAX_NODE_FILE_BYTES
        if isinstance(value, bool) or not isinstance(value, int) or value < 65_536:
            log.warning(
                "[tool.autology.store] max_node_file_bytes must be a whole number of at least 65536, got %r;"
                " node files are capped at %s bytes",
                value,
                MAX_NODE_FILE_BYTES,
            )
            return MAX_NODE_FILE_BYTES
        return value

    def _too_big(self, size: int) -> str | None:
        if size <= self.max_file_bytes:
            return None
        return (
            f"the file is {size:,} bytes, over the {self.max_file_bytes:,}-byte limit for a node file"
            " ([tool.autology.store] max_node_file_bytes); it was not read"
        )

    def _db_identity(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.paths.node_db)
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def ensure_cache(self) -> bool:
        """Reopen and rebuild the cache database if it was deleted or replaced under this process.

        Cheap (one stat) when nothing happened; a long-running server calls it before each request,
        so deleting ``.autology/cache/`` (documented as safe) never leaves it on a vanished database.
        """
        if self._db_id is not None and self._db_identity() == self._db_id:
            return False
        with self.lock.hold():
            if self._db_id is not None and self._db_identity() == self._db_id:
                return False  # another thread reopened it meanwhile
            log.warning("cache database %s was deleted or replaced; reopening and rebuilding it", self.paths.node_db)
            self._reopen_index(discard=False)
        return True

    def verify_cache(self) -> bool:
        """The integrity check a store opened with ``verify=False`` skipped (``autology serve`` runs it
        in the background while the MCP session starts): a damaged cache database is thrown away and
        rebuilt from the files. True when it was."""
        try:
            self.index.check()
            return False
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):  # busy or locked: another process is at work, which is not damage
                raise StorageError(str(self.paths.node_db), f"cannot check the cache database: {exc}") from exc
            with self.lock.hold():
                log.warning("cache database %s is damaged (%s); rebuilding it from the node files", self.paths.node_db, exc)
                self._reopen_index(discard=True)
            return True

    def _reopen_index(self, discard: bool) -> None:
        """Close the cache database (deleting it when ``discard``), open it anew and reconcile (under the lock)."""
        try:
            self.index.close()
        except sqlite3.Error:
            pass
        if discard:
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.paths.node_db) + suffix).unlink(missing_ok=True)
        self.index = self._open_index()
        self._db_id = self._db_identity()
        self._line_sources, self._lines_generation = None, -1
        self._renders.clear()
        with self._graph_lock:
            self._graph, self._graph_generation = None, -1
        self.reconcile()

    def _open_index(self, verify: bool = True) -> NodeIndex:
        """The cache database, rebuilt when damaged. ``verify`` runs SQLite's ``quick_check`` over
        the whole file (~45 ms at 10,000 nodes): the server and the CLI do; a hook, which must be
        fast and only reads, does not (a damaged database then fails its query, and the hook stays
        silent until the next server or command repairs it)."""
        try:
            self.paths.cache.mkdir(parents=True, exist_ok=True)
            index = NodeIndex(self.paths.node_db)
            if verify:
                index.check()
            return index
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):  # never delete a database another process is creating or writing
                raise StorageError(str(self.paths.node_db), f"cannot open the cache database: {exc}") from exc
            log.warning("cache database %s is damaged (%s); rebuilding it from the node files", self.paths.node_db, exc)
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.paths.node_db) + suffix).unlink(missing_ok=True)
            return NodeIndex(self.paths.node_db)
        except OSError as exc:
            raise StorageError(str(self.paths.cache), f"cannot create the cache directory: {exc.strerror}") from exc

    def init(self) -> list[Path]:
        """Create the directory layout and ``.autology/.gitignore``; returns what was created."""
        created: list[Path] = []
        try:
            for node_type in NODE_TYPES:
                directory = self.paths.type_dir(node_type)
                if not directory.exists():
                    try:
                        directory.mkdir(parents=True)
                    except FileExistsError:  # another process (a second server starting) made it meanwhile
                        continue
                    created.append(directory)
            self.paths.graph_index.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.paths.base / ".gitignore"
            if not gitignore.exists():
                atomic_write(gitignore, GITIGNORE, durable=self.durable)
                created.append(gitignore)
        except OSError as exc:
            raise StorageError(str(self.paths.base), exc.strerror or str(exc)) from exc
        self._remove_stale_temp_files()
        return created

    def _remove_stale_temp_files(self, older_than_s: float = 600.0) -> None:
        """Temporary files of atomic writes a killed process never finished (a live write's lasts
        milliseconds): in cache/ (node files) and graph/ (index.json). Never needed, never read."""
        cutoff = time.time() - older_than_s
        for folder in (self.paths.cache, self.paths.graph_index.parent):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    try:
                        if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                            os.unlink(entry.path)
                    except OSError:
                        continue

    def close(self) -> None:
        self.flush_graph_index()
        with self.lock.hold():  # a rewrite the timer had already begun finishes first
            self.index.close()

    # ------------------------------------------------------------------ paths

    def rel(self, path: Path) -> str:
        return Path(path).relative_to(self.root).as_posix()

    def abs(self, rel_path: str) -> Path:
        return self.root / rel_path

    def _scan_files(self, folders: list[str] | None = None) -> tuple[dict[str, os.stat_result], dict[str, int]]:
        """Every ``*.md`` below nodes/ (or below the given root-relative folders), hidden files and
        folders skipped, with its stat; and each folder listed, with its mtime taken *before* the
        listing (so a change made while listing shows as a later mtime next time)."""
        found: dict[str, os.stat_result] = {}
        stamps: dict[str, int] = {}
        # Root-relative paths by slicing the scanned path (Path.relative_to per file costs ~20 us).
        prefix = len(os.path.join(str(self.root), ""))
        stack = [str(self.paths.nodes)] if folders is None else [os.path.join(str(self.root), f) for f in folders]
        while stack:
            directory = stack.pop()
            try:
                mtime_ns = os.stat(directory).st_mtime_ns
                entries = list(os.scandir(directory))
            except FileNotFoundError:
                continue
            except OSError as exc:
                log.warning("cannot list %s: %s", directory, exc.strerror)
                continue
            stamps[directory[prefix:].replace(os.sep, "/")] = mtime_ns
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    rel_path = entry.path[prefix:]
                    if os.sep != "/":
                        rel_path = rel_path.replace(os.sep, "/")
                    try:
                        found[rel_path] = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
        return found, stamps

    # ------------------------------------------------------------------ syncing files -> index

    def _ingest(self, conn: sqlite3.Connection, rel_path: str, stat: os.stat_result | None) -> tuple[str, bool]:
        """Bring one file's rows in line with the file. Returns (what happened, relations changed)."""
        old_row = self.index.file_row(rel_path)
        old_node = self.index.get_node(old_row.node_id) if old_row and old_row.node_id else None
        if stat is None:  # the file is gone
            if old_row is None:
                return "none", False
            self.index.drop_file(conn, rel_path)
            if old_node is not None and self.index.node_path(old_node.id) == rel_path:
                self.index.delete_node(conn, old_node.id)
                return "removed", bool(old_node.relations)
            return "removed", False
        abs_path = self.abs(rel_path)
        node, error = None, self._too_big(stat.st_size)
        if error is None:
            try:
                node = parse_node(read_text(abs_path), fallback_time=_file_time(stat), path=rel_path)
            except (MalformedNodeError, StorageError) as exc:
                error = getattr(exc, "reason", str(exc))
        if node is not None:
            holder = self.index.node_path(node.id)
            if holder and holder != rel_path and self.abs(holder).exists():
                node, error = None, f"duplicate id {node.id}: the node is already defined in {holder}"
        if node is None:
            if not old_row or old_row.error != error:
                log.warning("skipping malformed node file %s: %s", rel_path, error)
            self.index.put_file(conn, rel_path, stat.st_mtime_ns, stat.st_size, None, error)
            if old_node is not None and self.index.node_path(old_node.id) == rel_path:
                self.index.delete_node(conn, old_node.id)
                return "updated", bool(old_node.relations)
            return ("updated" if old_row else "added"), False
        if old_node is not None and old_node.id != node.id and self.index.node_path(old_node.id) == rel_path:
            self.index.delete_node(conn, old_node.id)
        previous = self.index.get_node(node.id)
        self.index.upsert_node(conn, node, rel_path)
        self.index.put_file(conn, rel_path, stat.st_mtime_ns, stat.st_size, node.id, None)
        relations_changed = previous is None and bool(node.relations) or (
            previous is not None and previous.relations != node.relations
        )
        if old_node is not None and old_node.id != node.id and old_node.relations:
            relations_changed = True
        return ("updated" if old_row else "added"), relations_changed

    def _recheck_duplicates(self, conn: sqlite3.Connection, on_disk: dict[str, os.stat_result]) -> bool:
        """After removals: a file skipped as a duplicate may now be the only holder of its id."""
        relations_changed = False
        for rel_path, error in self.index.errors():
            if error.startswith("duplicate id") and rel_path in on_disk:
                _, rel_changed = self._ingest(conn, rel_path, on_disk[rel_path])
                relations_changed |= rel_changed
        return relations_changed

    def reconcile(self) -> ReconcileReport:
        """Compare every node file's mtime and size with the index; re-read only what changed."""
        return self._reconcile(None)

    def refresh(self) -> ReconcileReport:
        """Bring the index in step with the files, cheaply when a watcher is following them.

        Without a live watcher (:mod:`autology_mcp.knowledge.lease`) this is :meth:`reconcile`:
        every file is checked, so a file edited in place is seen. With one, in-place edits are the
        watcher's job, and only the folders whose mtime changed since their last listing are listed
        again (a file added, removed, renamed or atomically replaced changes its folder's mtime):
        a handful of stats when nothing changed, whatever the store's size."""
        stamps = self.index.dir_stamps()
        if not stamps or not watched(self.paths.cache):
            return self.reconcile()
        changed = []
        for folder, mtime_ns in stamps.items():
            try:
                if os.stat(self.root / folder).st_mtime_ns == mtime_ns:
                    continue
            except OSError:
                pass
            changed.append(folder)
        if not changed:
            return ReconcileReport(malformed=[])
        tops = [f for f in sorted(changed) if not any(f.startswith(other + "/") for other in changed)]
        return self._reconcile(tops)

    def _reconcile(self, folders: list[str] | None) -> ReconcileReport:
        """:meth:`reconcile` over every node file (``folders`` None) or the files below some folders."""
        report = ReconcileReport()
        with self.lock.hold():
            on_disk, seen = self._scan_files(folders)
            if folders is None:
                known = self.index.file_stats()
            else:
                known = {}
                for folder in folders:
                    known.update(self.index.file_stats(folder + "/"))
            report.scanned = len(on_disk)
            changed = [
                p for p, st in on_disk.items() if known.get(p) != (st.st_mtime_ns, st.st_size)
            ]
            gone = [p for p in known if p not in on_disk]
            relations_changed = False
            if changed or gone:
                with self.index.transaction() as conn:
                    for rel_path in sorted(gone):  # removals first, so a moved file keeps its id
                        outcome, rel_changed = self._ingest(conn, rel_path, None)
                        report.removed += outcome == "removed"
                        relations_changed |= rel_changed
                    # Files named <id>.md first: when two files hold one id, the one at the node's own
                    # path is the node, whatever the other file is called (and however it sorts).
                    for rel_path in sorted(changed, key=lambda p: (not _UUID_NAME.match(p.rsplit("/", 1)[-1]), p)):
                        outcome, rel_changed = self._ingest(conn, rel_path, on_disk[rel_path])
                        report.added += outcome == "added"
                        report.updated += outcome == "updated"
                        relations_changed |= rel_changed
                    if gone:
                        relations_changed |= self._recheck_duplicates(conn, on_disk)
                if len(changed) + len(gone) >= OPTIMIZE_FROM_FILES:
                    self.index.optimize()
            self._stamp_folders(folders, seen)
            report.malformed = self.index.errors()
            report.graph_index_rewritten = self._ensure_graph_index(force_check=True)
        if report.changed:
            log.info(
                "reconciled %d node files: %d added, %d updated, %d removed",
                report.scanned,
                report.added,
                report.updated,
                report.removed,
            )
        return report

    def _stamp_folders(self, folders: list[str] | None, seen: dict[str, int]) -> None:
        """Record the folders just listed (all of them after a full reconcile). A folder changed within
        the last RACY_S seconds is left out, so it is listed again next time: a change made in the same
        clock tick as the listing would otherwise leave its mtime as stamped (git's "racy" case)."""
        now = time.time_ns()
        fresh = {f: m for f, m in seen.items() if now - m > RACY_S * 1_000_000_000}
        if folders is None:
            stamps = fresh
        else:
            stamps = {
                f: m for f, m in self.index.dir_stamps().items()
                if not any(f == top or f.startswith(top + "/") for top in folders)
            } | fresh
        self.index.set_dir_stamps(stamps)

    def sync_path(self, abs_path: Path | str) -> str:
        """Re-read one file if it changed (the watcher calls this on every file event)."""
        abs_path = Path(abs_path)
        try:
            rel_path = self.rel(abs_path)
            below_nodes = abs_path.relative_to(self.paths.nodes).parts  # '.autology' itself is hidden
        except ValueError:
            return "none"
        if not rel_path.endswith(".md") or any(part.startswith(".") for part in below_nodes):
            return "none"
        if self._indexed_as_is(abs_path, rel_path):  # most events: the store's own writes, already indexed
            return "none"
        with self.lock.hold():
            if self._indexed_as_is(abs_path, rel_path):
                return "none"
            try:
                stat = abs_path.stat()
            except FileNotFoundError:
                stat = None
            with self.index.transaction() as conn:
                outcome, relations_changed = self._ingest(conn, rel_path, stat)
                if stat is None:
                    relations_changed |= self._recheck_duplicates(conn, self._scan_files()[0])
            if relations_changed:
                self._graph_index_changed()
            return outcome

    def _indexed_as_is(self, abs_path: Path, rel_path: str) -> bool:
        """The file is indexed with its current mtime and size (or is gone and not indexed)."""
        try:
            stat = abs_path.stat()
        except FileNotFoundError:
            stat = None
        row = self.index.file_row(rel_path)
        if stat is None or row is None:
            return stat is None and row is None
        return row.mtime_ns == stat.st_mtime_ns and row.size == stat.st_size

    def rebuild(self) -> ReconcileReport:
        """Throw away every derived index and rebuild it from the node files."""
        with self.lock.hold():
            self.index.reset()
            self.paths.graph_index.unlink(missing_ok=True)
            with self._graph_lock:
                self._graph = None
            self._line_sources = None  # a new database counts its generations from 0 again
            self._renders.clear()
            return self.reconcile()

    # ------------------------------------------------------------------ graph index

    def _track_relations(self, source_id: str, relations: tuple[Relation, ...]) -> None:
        """After this process committed a transaction that set ``source_id``'s relations: update the lines."""
        before, after = self.index.last_relations_generations
        if self._line_sources is None or self._lines_generation != before:
            self._line_sources = None  # relations changed elsewhere in between: rebuilt from the index when needed
            return
        if after != before:
            lines = sorted(
                (r.type.value, r.target, relation_line(source_id, r.target, r.type.value, r.description, r.confidence))
                for r in relations
            )
            position = bisect.bisect_left(self._line_sources, source_id)
            present = position < len(self._line_sources) and self._line_sources[position] == source_id
            if lines:
                chunk = lines if len(lines) >= HUB_RELATIONS else ",\n".join(line for _, _, line in lines)
                self._hub_lines |= chunk is lines
                if present:
                    self._line_chunks[position] = chunk
                else:
                    self._line_sources.insert(position, source_id)
                    self._line_chunks.insert(position, chunk)
            elif present:
                del self._line_sources[position]
                del self._line_chunks[position]
        self._lines_generation = after

    def _track_hub_relation(self, source_id: str, relation: Relation, added: bool) -> None:
        """After this process committed one more relation of the hub ``source_id`` (``added``) or a
        change of one it has: insert its line, or replace it."""
        before, after = self.index.last_relations_generations
        if self._line_sources is None or self._lines_generation != before:
            self._line_sources = None  # relations changed elsewhere in between: rebuilt from the index when needed
            return
        position = bisect.bisect_left(self._line_sources, source_id)
        chunk = self._line_chunks[position] if position < len(self._line_sources) else None
        if self._line_sources[position : position + 1] != [source_id] or not isinstance(chunk, list):
            self._line_sources = None  # not kept as a hub's list: rebuilt from the index when needed
            return
        t, target = relation.type.value, relation.target
        line = (t, target, relation_line(source_id, target, t, relation.description, relation.confidence))
        if added:
            bisect.insort(chunk, line)
        else:
            i = bisect.bisect_left(chunk, (t, target))  # before any (t, target, line)
            if i == len(chunk) or chunk[i][:2] != (t, target):
                self._line_sources = None  # not there: rebuilt from the index when needed
                return
            chunk[i] = line
        self._lines_generation = after

    def _relation_lines(self) -> list[str]:
        """The relations part of graph/index.json, in the file's order (source, type, target): one
        string per source node, each holding that node's relation lines."""
        chunks = self._relation_chunks()
        if not self._hub_lines:
            return chunks  # type: ignore[return-value]  # all strings
        return [c if isinstance(c, str) else ",\n".join(line for _, _, line in c) for c in chunks]

    def _relation_chunks(self) -> list[str | list[tuple[str, str, str]]]:
        """:attr:`_line_chunks`, rebuilt from the index if it is not in step with it."""
        with self.index.snapshot():
            generation = self.index.relations_generation()
            if self._line_sources is None or self._lines_generation != generation:
                by_source: dict[str, list[tuple[str, str, str]]] = {}
                for source, target, type_, description, confidence in self.index.relation_rows():
                    by_source.setdefault(source, []).append(
                        (type_, target, relation_line(source, target, type_, description, confidence))
                    )
                sources = sorted(by_source)
                self._line_chunks = [
                    sorted(by_source[s]) if len(by_source[s]) >= HUB_RELATIONS
                    else ",\n".join(line for _, _, line in sorted(by_source[s]))
                    for s in sources
                ]
                self._hub_lines = any(isinstance(c, list) for c in self._line_chunks)
                self._line_sources = sources
                self._lines_generation = generation
            return self._line_chunks

    def _stamp_graph_index(self, relations_generation: int) -> None:
        """Remember which relations state graph/index.json (as it is on disk now) reflects."""
        try:
            stat = self.paths.graph_index.stat()
        except OSError:
            return
        try:
            self.index.put_meta("graph_index_stamp", _graph_stamp(relations_generation, stat))
        except sqlite3.Error as exc:  # only an optimisation: without it the next start checks the file
            log.debug("cannot record the graph index stamp: %s", exc)

    def _graph_index_stamped(self) -> bool:
        try:
            stat = self.paths.graph_index.stat()
        except OSError:
            return False
        return self.index.get_meta("graph_index_stamp") == _graph_stamp(self.index.relations_generation(), stat)

    def _write_graph_index(self) -> None:
        """Rewrite ``graph/index.json``: atomically (a reader never sees half a file) but without fsync,
        since it is derived and rebuilt from the node files. A crash that loses the write cannot leave a
        stamped but wrong file: the stamp holds the file's size and mtime as written, so an older or
        empty file after a crash no longer matches and the next start rewrites it (issue 17)."""
        text = render_graph_index_lines(self._relation_lines(), utc_now())
        try:
            atomic_write(self.paths.graph_index, text, durable=False)
        except StorageError as exc:
            # A derived file: the node files (the truth) are already written, so the operation stands
            # rather than failing after the fact. Left unstamped, the file is rewritten by the next
            # relation change or reconcile (at the latest when a server starts).
            log.warning("could not rewrite %s (derived; rewritten later): %s", exc.path, exc.reason)
            return
        self._stamp_graph_index(self._lines_generation)

    def _graph_index_changed(self) -> None:
        """Relations changed (the caller holds the write lock): rewrite graph/index.json now, or
        schedule one rewrite ``graph_index_delay`` seconds from now for this and any later changes."""
        if self.graph_index_delay <= 0:
            self._write_graph_index()
            return
        with self._graph_timer_lock:
            if self._graph_timer is None:
                timer = threading.Timer(self.graph_index_delay, self.flush_graph_index)
                timer.daemon = True
                timer.name = "autology-graph-index"
                self._graph_timer = timer
                timer.start()

    def flush_graph_index(self) -> None:
        """Write a scheduled graph/index.json rewrite now (the timer's work; also run at close)."""
        with self._graph_timer_lock:
            timer, self._graph_timer = self._graph_timer, None
        if timer is None:
            return
        timer.cancel()
        try:
            with self.lock.hold():
                if not self._graph_index_stamped():
                    self._write_graph_index()
        except (StorageError, sqlite3.Error) as exc:  # derived: the next change or start rewrites it
            log.warning("could not rewrite graph/index.json (derived; rewritten later): %s", exc)

    def _ensure_graph_index(self, force_check: bool = False) -> bool:
        """Rewrite ``graph/index.json`` when it is missing, corrupt or differs from the nodes.

        Cheapest first: the file is untouched since it was written for the current relations (its
        size and mtime as stamped then); else it is exactly what would be written, apart from its
        lastUpdated stamp; else it holds the same set of relations, however formatted.
        """
        if self._graph_index_stamped():
            return False
        try:
            text = self.paths.graph_index.read_text(encoding="utf-8")
        except (OSError, ValueError):
            text = None
        if text is not None:
            expected = render_graph_index_lines(self._relation_lines(), _STAMP_TIME)
            in_sync = _LAST_UPDATED.sub(_STAMP_LINE, text, count=1) == expected
            if not in_sync:
                on_file = read_graph_index(self.paths.graph_index)
                in_sync = on_file is not None and relation_keys(on_file) == relation_keys(self.index.relations())
            if in_sync:
                self._stamp_graph_index(self._lines_generation)
                return False
        self._write_graph_index()
        return True

    def graph(self) -> nx.MultiDiGraph:
        """The NetworkX view of all nodes and relations, rebuilt when any process changed the store."""
        generation = self.index.generation()
        with self._graph_lock:
            if self._graph is None or generation != self._graph_generation:
                nodes = [(i, t, s, title) for i, t, s, title, _ in self.index.node_summaries()]
                self._graph = build_graph(nodes, self.index.relations())
                self._graph_generation = generation
            return self._graph

    # ------------------------------------------------------------------ reads

    def _locate(self, node_id: str) -> str:
        """The file of a node, looking on disk when the index does not know it yet."""
        rel_path = self.index.node_path(node_id)
        if rel_path is not None and self.abs(rel_path).exists():
            return rel_path
        # Not indexed (yet), or moved: a file named <id>.md in any folder, or anything changed on disk.
        candidates = [self.paths.type_dir(t) / f"{node_id}.md" for t in NODE_TYPES]
        if rel_path is not None or not any(c.exists() for c in candidates):
            self.reconcile()
        else:
            for candidate in candidates:
                if candidate.exists():
                    self.sync_path(candidate)
        rel_path = self.index.node_path(node_id)
        if rel_path is not None:
            return rel_path
        for path, error in self.index.errors():
            if Path(path).stem == node_id:
                raise StorageError(str(self.abs(path)), f"the node file is malformed and cannot be changed: {error}")
        raise NotFoundError(node_id)

    def get(self, node_id: str) -> KnowledgeNode:
        node_id = validate_id(node_id)
        node = self.index.get_node(node_id)
        if node is None:
            self._locate(node_id)
            node = self.index.get_node(node_id)
            if node is None:
                raise NotFoundError(node_id)
        return node

    def exists(self, node_id: str) -> bool:
        """Whether the node exists, as :meth:`get` finds it; one index lookup when it is indexed (its
        relations are not read back: a hub's 10,000 relation rows were, for a relate to it)."""
        if self.index.node_path(validate_id(node_id)) is not None:
            return True
        try:
            self.get(node_id)
            return True
        except NotFoundError:
            return False

    def _read_fresh(self, node_id: str) -> tuple[str, KnowledgeNode]:
        """Under the lock: the node as its file says now. When the file's mtime and size are those
        the index recorded when it read or wrote it (the test every reconcile trusts), the index's
        copy is that file's parse (unless the file has unknown keys, whose YAML types a JSON copy can
        lose); otherwise the file is parsed again (a hand edit, a pull)."""
        rel_path = self._locate(node_id)
        try:
            abs_path = self.abs(rel_path)
            stat = abs_path.stat()
            row = self.index.file_row(rel_path)
            if row is not None and row.node_id == node_id and row.error is None and (row.mtime_ns, row.size) == (
                stat.st_mtime_ns, stat.st_size
            ):
                cached = self.index.get_node(node_id)
                if cached is not None and not set(cached.extra) - {FINGERPRINT_KEY} and not cached.as_written:
                    return rel_path, cached  # unknown keys (and values as written) may hold dates JSON cannot keep
            too_big = self._too_big(stat.st_size)
            if too_big:
                raise MalformedNodeError(too_big)
            node = parse_node(read_text(abs_path), fallback_time=_file_time(stat), path=rel_path)
        except MalformedNodeError as exc:
            raise StorageError(str(self.abs(rel_path)), f"the node file is malformed and cannot be changed: {exc}")
        except FileNotFoundError:
            raise NotFoundError(node_id) from None
        if node.id != node_id:
            self.reconcile()
            raise StorageError(str(self.abs(rel_path)), f"the file now holds node {node.id}, not {node_id}; retry")
        return rel_path, node

    # ------------------------------------------------------------------ writes

    def _commit(self, node: KnowledgeNode, old_rel_path: str | None, relations_changed: bool) -> None:
        """Write the node's file, then its index rows (and the graph index when relations changed)."""
        new_path = self.paths.node_file(node.type.value, node.id)
        new_rel = self.rel(new_path)
        if old_rel_path != new_rel and new_path.exists():
            # Moving the node to its own path would overwrite another file (a duplicate of the id).
            raise StorageError(
                str(new_path),
                f"cannot move node {node.id} here from {old_rel_path or 'nowhere'}: another file already "
                "exists at this path (a duplicate id?); resolve it first (see 'autology doctor')",
            )
        # The temporary file is written in cache/ (same file system): the watched nodes/ folder then
        # sees only the finished file arrive, not a temporary file's creation, writes and move.
        data = render_node(node, self.index.titles_of([r.target for r in node.relations])).encode("utf-8")
        size = len(data)
        if size > self.max_file_bytes:  # the store would skip its own file at the next read
            raise ValidationError(
                "content" if len(node.relations) <= 100 else "relations",
                f"the node file would be {size:,} bytes, over the {self.max_file_bytes:,}-byte limit for a node file"
                " ([tool.autology.store] max_node_file_bytes): shorten the content or split the node"
                + (f" (it has {len(node.relations):,} relations)" if len(node.relations) > 100 else "")
            )
        self._renders.pop(node.id, None)
        stat = atomic_write(new_path, data, durable=self.durable, tmp_dir=self.paths.cache)
        if old_rel_path and old_rel_path != new_rel:
            remove_file(self.abs(old_rel_path))
        with self.index.transaction() as conn:
            if old_rel_path and old_rel_path != new_rel:
                self.index.drop_file(conn, old_rel_path)
            self.index.upsert_node(conn, node, new_rel)
            self.index.put_file(conn, new_rel, stat.st_mtime_ns, stat.st_size, node.id, None, rendered=True)
        self._track_relations(node.id, node.relations)
        if relations_changed:
            self._graph_index_changed()
        if len(node.relations) >= HUB_RELATIONS:
            self._keep_render(node.id, new_rel, stat, data, len(node.relations), None)

    def _keep_render(
        self, node_id: str, rel_path: str, stat: os.stat_result, text: bytes, relations: int, at: int | None
    ) -> None:
        self._renders[node_id] = (rel_path, stat.st_mtime_ns, stat.st_size, text, relations, at)
        self._renders.move_to_end(node_id)
        while len(self._renders) > RENDERS_KEPT:
            self._renders.popitem(last=False)

    def add_relation(
        self, source_id: str, relation: Relation, restate: Callable[[Relation], Relation] | None = None
    ) -> bool:
        """A relate from a hub, at a cost that grows with none of its other relations: False (nothing
        done; :meth:`modify` does it) unless ``source_id`` is a hub whose file is still as the store
        wrote it (:meth:`_hub_text`).

        A relation of a new type or target is spliced into that text (:func:`markdown.with_relation`,
        the same text a full render gives, but for the titles of the other links, kept as written),
        one row into the relations table (the index keeps a hub's relations there only: its JSON
        stays as it is), one line into graph/index.json's lines. One it has already becomes
        ``restate(it)`` (``relation`` when None): nothing is written when that is the same, else its
        item is replaced in the text (:func:`markdown.with_relation_replaced`), its row and its line
        updated. Call with the write lock held, the target checked."""
        data = self.index.node_data(source_id)
        if data is None or '"relations":null' not in data:
            return False  # not a hub (the index holds its relations in its JSON): the full way
        old = self.index.relation_of(source_id, relation.target, relation.type.value)
        if old is not None:
            relation = restate(old) if restate is not None else relation
            rel_path = self.index.node_path(source_id)
            if relation == old and rel_path is not None and self._indexed_as_is(self.abs(rel_path), rel_path):
                return True  # the file says so already (as the full way finds, writing nothing)
        kept = self._hub_text(source_id)
        if kept is None:
            return False
        rel_path, size, text, count, at = kept
        if old is None:
            link = None
            if not self.index.has_relation(source_id, relation.target):
                link = related_line(relation.target, self.index.titles_of([relation.target]).get(relation.target))
            spliced = with_relation(text, relation, link, at)
        else:
            spliced = with_relation_replaced(text, old, relation, at)
        if spliced is None or size + spliced[2] > self.max_file_bytes:
            self._renders.pop(source_id, None)
            return False  # the full way (which also says why a file would be too big)
        new_text, at, _ = spliced
        self._renders.pop(source_id, None)
        stat = atomic_write(self.abs(rel_path), new_text, durable=self.durable, tmp_dir=self.paths.cache)
        with self.index.transaction() as conn:
            if old is None:
                self.index.add_relation(conn, source_id, relation, count)
            else:
                self.index.set_relation(conn, source_id, relation)
            self.index.put_file(conn, rel_path, stat.st_mtime_ns, stat.st_size, source_id, None, rendered=True)
        self._track_hub_relation(source_id, relation, added=old is None)
        self._graph_index_changed()
        self._keep_render(source_id, rel_path, stat, new_text, count + (old is None), at)
        return True

    def _hub_text(self, node_id: str) -> tuple[str, int, bytes, int, int | None] | None:
        """The hub's file as the store wrote it, unchanged since: (its path, its size, its bytes, its
        relations, where the next relation's item goes or None). From memory when this process wrote
        it last; else read from disk when the index says the store wrote it (another process, or this
        one before it restarted), which costs a read of the file, as the write does. None when the
        file changed since (by hand, a pull) or the index took it from disk (a rebuild): it may be
        shaped otherwise, and the full way renders it."""
        rel_path = self.index.node_path(node_id)
        row = self.index.file_row(rel_path) if rel_path is not None else None
        kept = self._renders.pop(node_id, None)
        if row is None or (row.node_id, row.error, row.rendered) != (node_id, None, True):
            return None
        path = self.abs(rel_path)  # type: ignore[arg-type]
        if kept is not None and kept[:3] == (rel_path, row.mtime_ns, row.size):
            try:
                stat = os.stat(path)
            except OSError:
                return None
            if (stat.st_mtime_ns, stat.st_size) != (row.mtime_ns, row.size):
                return None  # changed since
            self._renders[node_id] = kept
            return rel_path, row.size, kept[3], kept[4], kept[5]
        try:
            with open(path, "rb") as handle:
                before = os.fstat(handle.fileno())
                text = handle.read()
                after = os.fstat(handle.fileno())
        except OSError:
            return None
        if {(before.st_mtime_ns, before.st_size), (after.st_mtime_ns, after.st_size)} != {(row.mtime_ns, row.size)} or (
            len(text) != row.size
        ):
            return None  # changed since, or while it was read
        return rel_path, row.size, text, self.index.relation_count(node_id), None

    def create(self, node: KnowledgeNode) -> KnowledgeNode:
        """Store a new node. Its relation targets must exist (rule 7)."""
        with self.lock.hold():
            if self.index.node_path(node.id) is not None:
                raise StorageError(str(self.paths.node_file(node.type.value, node.id)), "a node with this id exists")
            missing = [r.target for r in node.relations if not self.exists(r.target)]
            if missing:
                raise NotFoundError(missing[0], "relation target")
            self._commit(node, None, bool(node.relations))
        return node

    def modify(
        self, node_id: str, change: Callable[[KnowledgeNode], KnowledgeNode]
    ) -> tuple[KnowledgeNode, KnowledgeNode]:
        """Read-modify-write one node under the lock: ``change`` gets the node as on disk now.

        Returns (before, after); nothing is written when ``change`` returns an equal node.
        """
        node_id = validate_id(node_id)
        with self.lock.hold():
            rel_path, before = self._read_fresh(node_id)
            after = change(before)
            if after != before:  # what a person wrote against a write rule stays, unless the change replaced it
                after = settle(str(self.abs(rel_path)), before, after)
            if after != before or self.rel(self.paths.node_file(after.type.value, after.id)) != rel_path:
                self._commit(after, rel_path, after.relations != before.relations)
        return before, after

    def delete(self, node_id: str) -> tuple[KnowledgeNode, int]:
        """Delete a node and every relation from or to it. Returns (the node, relations removed)."""
        node_id = validate_id(node_id)
        with self.lock.hold():
            # The incoming relations are found through the index: bring it up to date with the files
            # first, or a relation written by hand since the last reconcile would be left dangling.
            self.reconcile()
            rel_path, node = self._read_fresh(node_id)
            self._renders.pop(node_id, None)
            removed = len(node.relations)
            # All or nothing: if a source file cannot be rewritten (disk full, permission denied) or the
            # node's file cannot be removed, the sources already rewritten get their relations back and
            # the delete fails, rather than deleting the node and leaving relations to it dangling.
            rewritten: list[KnowledgeNode] = []
            try:
                for source_id in sorted({source for source, _ in self.index.incoming(node_id)} - {node_id}):
                    try:
                        before, after = self.modify(
                            source_id,
                            lambda n: n.replace(relations=tuple(r for r in n.relations if r.target != node_id)
                            ),
                        )
                    except NotFoundError:
                        continue
                    if after != before:
                        rewritten.append(before)
                    removed += len(before.relations) - len(after.relations)
                remove_file(self.abs(rel_path))
            except StorageError:
                for before in reversed(rewritten):
                    try:
                        self.modify(before.id, lambda n, restored=before: n.replace(relations=restored.relations))
                    except (NotFoundError, StorageError) as exc:
                        log.error("could not give %s back its relations to %s: %s", before.id, node_id, exc)
                raise
            with self.index.transaction() as conn:
                self.index.delete_node(conn, node_id)
                self.index.drop_file(conn, rel_path)
                # a copy of the file skipped as a duplicate of this one is now the only holder of the id
                copies = {}
                for path, error in self.index.errors():
                    if error.startswith(f"duplicate id {node_id}"):
                        try:
                            copies[path] = self.abs(path).stat()
                        except FileNotFoundError:
                            continue
                if copies:
                    self._recheck_duplicates(conn, copies)
            self._track_relations(node_id, ())
            self._graph_index_changed()
        return node, removed
