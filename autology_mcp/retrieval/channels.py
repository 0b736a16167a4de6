"""The retrieval channels. Each returns rankings (best first) of candidate keys; the candidates
themselves go into one shared pool, so a chunk found by three channels is one candidate.

- nodes (the node store's SQLite FTS5 index): ``node_bm25`` is ``autology_query``'s ranking (BM25
  over the whole node plus what the query's terms in its title and tags add:
  :mod:`autology_mcp.knowledge.search`); ``node_title_tags`` ranks the nodes matching in their title
  or tags only, by BM25 (column weights 2 / 1 / 1);
- code and docs (the repository index): one BM25 pass scored by the index's own hybrid ranker
  (:func:`autology_mcp.code.query.score_candidates`) gives ``code_bm25`` (that ranking),
  ``vectors`` (by hashed-vector cosine) and ``symbols`` (by symbol-name match), to which exact
  symbol-table lookups are added; ``paths`` ranks files whose path words match the query words
  (exactly, by prefix, or by trigram similarity for words not in any path);
- ``sessions``: session memory's chunk and handoff search, when that module is present and enabled.
"""

from __future__ import annotations

import logging
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autology_mcp.code import query as repo_query
from autology_mcp.code.vectors import cosine_sparse_dense, sparse_vector
from autology_mcp.common.text import code_identifiers, code_query_words, name_words
from autology_mcp.knowledge.models import KnowledgeNode
from autology_mcp.knowledge.search import search_nodes
from autology_mcp.retrieval.candidates import Candidate, is_doc_path
from autology_mcp.semantic.nodes import dense_for

# title, content, tags, for the node_title_tags channel's BM25 (node_bm25 is autology_query's own
# ranking). Chosen when it weighed the old node_bm25 channel too: on the judged knowledge queries
# (bench/knowledge_eval.py) 2 / 1 / 1 ranked better than 10 / 1 / 5 (nDCG@10 0.801 -> 0.807).
NODE_BM25_WEIGHTS = (2.0, 1.0, 1.0)
from autology_mcp.knowledge.store import NodeStore

log = logging.getLogger("autology.retrieval")


@dataclass
class ChannelRun:
    name: str
    status: str = "ok"  # ok | empty | unavailable | disabled | no_index | error
    ranking: list[str] = field(default_factory=list)
    ms: float = 0.0
    note: str | None = None


class Pool:
    """Candidates by key, shared by the channels."""

    def __init__(self) -> None:
        self.items: dict[str, Candidate] = {}

    def add(self, cand: Candidate) -> Candidate:
        have = self.items.get(cand.key)
        if have is None:
            self.items[cand.key] = cand
            return cand
        return have


# ============================================================================ nodes


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def node_candidate(node: KnowledgeNode) -> Candidate:
    return Candidate(
        key=f"node:{node.id}",
        kind="node",
        ref=node.id,
        title=node.title,
        text=f"{node.title}\n{' '.join(node.tags)}\n{node.content}",
        node=node,
    )


def node_channels(store: NodeStore, query: str, terms: list[str], pool: Pool, size: int) -> tuple[list[ChannelRun], Pool]:
    """``autology_query``'s ranking, and BM25 over the title and tags columns only. Only the returned
    nodes are decoded.

    The first was FTS5's BM25 over title, content and tags (weights 2 / 1 / 1) until that ranked
    below plain BM25 on real records: on 736 PEPs queried by the changelog entries that cite them
    (bench/records_eval.py), unified search over the nodes went from MRR@10 0.382 to 0.534."""
    bm25 = ChannelRun("node_bm25")
    fielded = ChannelRun("node_title_tags")
    if not terms:
        bm25.status = fielded.status = "empty"
        return [bm25, fielded], pool
    index = store.index
    match = " OR ".join(_quoted(t) for t in terms)
    t0 = time.perf_counter()
    with index.snapshot():  # both rankings and the node data from one state of the index
        ranked = search_nodes(index, query, limit=size, dense=dense_for(store.root))
        t1 = time.perf_counter()
        rows_fielded = index.search_candidates("{title tags} : (" + match + ")", None, (), size, NODE_BM25_WEIGHTS)
        decoded = index.nodes_by_rowid([r[0] for r in rows_fielded]) if rows_fielded else {}
    t2 = time.perf_counter()
    bm25.ranking = [pool.add(node_candidate(hit.node)).key for hit in ranked]
    for key, hit in zip(bm25.ranking, ranked):
        pool.items[key].meta["node_score"] = hit.score  # autology_query's score: the record ranking (issue 37)
    fielded.ranking = [pool.add(node_candidate(decoded[r[0]])).key for r in rows_fielded if r[0] in decoded]
    for run in (bm25, fielded):
        if not run.ranking:
            run.status = "empty"
    bm25.ms = (t1 - t0) * 1000
    fielded.ms = (t2 - t1) * 1000
    return [bm25, fielded], pool


# ============================================================================ code and docs

_local = threading.local()
_refreshed: dict[str, float] = {}  # index db path -> monotonic time of the last size/mtime check
_refresh_lock = threading.Lock()


def _db(path: Path) -> sqlite3.Connection:
    """A read connection to the index database, kept per thread and reopened when the file is replaced
    (a full rebuild swaps in a new file)."""
    st = os.stat(path)
    ident = (st.st_dev, st.st_ino)
    cache = getattr(_local, "dbs", None)
    if cache is None:
        cache = _local.dbs = {}
    have = cache.get(str(path))
    if have is not None and have[0] == ident:
        return have[1]
    if have is not None:
        have[1].close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    cache[str(path)] = (ident, conn)
    return conn


class _DBView:
    """What repo.query needs of an IndexDB: its connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn


class PathVocabulary:
    """Path word -> indexed files having it, with the lookups of the ``paths`` channel."""

    def __init__(self, paths: list[str], files: dict[str, list[str]] | None = None):
        """From the indexed paths; ``files`` (word -> paths, as :attr:`files` was) skips the splitting."""
        self.n_files = len(paths)
        if files is None:
            files = {}
            for p in paths:
                for w in name_words(p):
                    files.setdefault(w, []).append(p)
        self.files: dict[str, list[str]] = files
        self.by_start: dict[str, list[str]] = {}  # first letter -> words
        for w in sorted(self.files):
            self.by_start.setdefault(w[:1], []).append(w)
        self._near: dict[str, list[str]] = {}

    def near(self, word: str) -> list[str]:
        """Path words for a query word no path contains: words it is a prefix of, words that are a
        prefix of it (4+ letters), else words of the same first letter with trigram similarity ≥ 0.5."""
        have = self._near.get(word)
        if have is not None:
            return have
        same_start = self.by_start.get(word[:1], [])
        found = [v for v in same_start if v.startswith(word)]
        found += [word[:i] for i in range(4, len(word)) if word[:i] in self.files]
        if not found:
            found = [v for v in same_start if abs(len(v) - len(word)) <= 2 and repo_query._word_sim(word, v) >= 0.5]
        found = sorted(set(found))[:20]
        if len(self._near) > 50_000:
            self._near.clear()
        self._near[word] = found
        return found


_path_vocab: dict[str, tuple[tuple, PathVocabulary]] = {}


def _vocabulary(conn: sqlite3.Connection, key: str, ident: tuple) -> PathVocabulary:
    """The index's path vocabulary, cached until the index database changes: in memory, and in a file
    beside the database, so a new process (a hook) loads it (~1 ms for sympy) instead of splitting
    every indexed path again (~17 ms; ten times that for a monorepo)."""
    have = _path_vocab.get(key)
    if have is not None and have[0] == ident:
        return have[1]
    paths = [r[0] for r in conn.execute("SELECT path FROM files WHERE skipped IS NULL ORDER BY path")]
    cache_file = Path(key).with_name("path_vocabulary.json")
    digest = hashlib.sha1("\n".join(paths).encode("utf-8")).hexdigest()  # the file list it was made from
    vocab = None
    try:
        saved = json.loads(cache_file.read_text(encoding="utf-8"))
        if saved.get("paths_sha1") == digest:
            vocab = PathVocabulary(paths, saved["files"])
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        vocab = None
    if vocab is None:
        vocab = PathVocabulary(paths)
        try:
            from autology_mcp.common.fsutil import atomic_write

            atomic_write(cache_file, json.dumps({"paths_sha1": digest, "files": vocab.files}), durable=False)
        except Exception:  # only a cache: a read-only or full disk must not fail the search
            log.debug("could not save the path vocabulary", exc_info=True)
    _path_vocab[key] = (ident, vocab)
    return vocab


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass
class CodeFreshness:
    exists: bool
    namespace: str | None = None
    checked: str = "skipped"  # refreshed (now, inline) | background (started now) | in_progress | recent | failed
    #   | rebuilding (a full rebuild runs in the background: see rebuild_in_background)
    #   | building (a new branch's first build runs in the background: _first_build)
    #   | updating (more than DEFER_OVER files changed: they are indexed again in the background)
    age_s: float | None = None
    refresh_ms: float | None = None
    rebuilt: int = 0
    deleted: int = 0
    note: str | None = None
    previous_build: bool | None = None  # while rebuilding: True if the hits come from the previous build
    pending: int | None = None  # updating: the files waiting to be indexed again (or deleted)
    read_from: str | None = None  # the namespace whose index was read, when not this one's (a new branch's)
    read_location: Any = field(default=None, repr=False)  # its IndexLocation (not in the trace)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and k != "read_location"}


def _refresh(root: Path, cfg, loc, interval: float) -> CodeFreshness:
    """Bring the index up to date with the files (size/mtime check, then re-index what changed).

    The first search of a process checks inline, so a new server or a CLI run searches fresh files.
    Later, a check is due every ``interval`` seconds and runs in a background thread while this
    search reads the index as it is: a search never waits for a refresh, nor for another process's
    build (SQLite readers see the last committed index)."""
    fresh = CodeFreshness(exists=True, namespace=loc.namespace)
    key = str(loc.db)
    with _refresh_lock:
        rebuilding = _rebuilding.get(key)
    if rebuilding is not None:
        fresh.checked, fresh.note, fresh.previous_build = rebuilding
        return fresh
    from autology_mcp.code import build as build_mod

    reason = build_mod.full_rebuild_reason(loc, cfg)
    if reason is not None:
        return _full_rebuild(root, cfg, loc, reason, fresh)
    now = time.monotonic()
    with _refresh_lock:
        last = _refreshed.get(key)
        due = last is None or now - last >= interval
        if due:
            _refreshed[key] = now  # one refresher at a time; others use the index as it is
        running = key in _refreshing
        if due and last is not None and not running:
            _refreshing.add(key)
    if last is None:
        fresh = _refresh_now(root, cfg, fresh, DEFER_OVER if _background_rebuilds else None)
        if fresh.pending:
            what = f"{fresh.pending} files changed since the code index was built are being indexed again"
            fresh.checked, fresh.note, _ = _build_in_background(
                root, cfg, key, what, "updating", what + "; until it is done, hits in them say stale", True)
        return fresh
    fresh.age_s = round(now - last, 2)
    if not due:
        fresh.checked = "recent"
    elif running:
        fresh.checked = "in_progress"
    else:
        fresh.checked = "background"
        _background().submit(_refresh_in_background, root, cfg, key)
    return fresh


def _refresh_now(root: Path, cfg, fresh: CodeFreshness, defer_over: int | None = None) -> CodeFreshness:
    """The quick build, inline. With ``defer_over``, more changed files than that are left for the
    caller to index in the background (``fresh.pending``)."""
    from autology_mcp.code import build as build_mod

    t0 = time.perf_counter()
    try:
        summary = build_mod.build(root, cfg, fast=True, defer_over=defer_over)
    except Exception as exc:  # a failed refresh must not fail the search: the index is still usable
        fresh.checked, fresh.note = "failed", f"{type(exc).__name__}: {exc}"
        return fresh
    if summary.get("mode") == "deferred":
        fresh.pending = int(summary["pending"])
        return fresh
    fresh.checked, fresh.age_s = "refreshed", 0.0
    fresh.refresh_ms = round((time.perf_counter() - t0) * 1000, 2)
    fresh.rebuilt, fresh.deleted = int(summary.get("rebuilt", 0)), int(summary.get("deleted", 0))
    return fresh


_refreshing: set[str] = set()
_refresher = None
_background_rebuilds = False
_rebuilding: dict[str, tuple[str, str, bool]] = {}  # index db path -> (state, note, hits from the previous build?)
DEFER_OVER = 200  # a server's first search re-indexes at most this many changed files inline (~2 s)


def rebuild_in_background(enabled: bool = True) -> None:
    """For a long-lived process (the MCP server): a search that finds the code index due for a full
    rebuild (its format, engine or build settings changed: after an upgrade, or an edit of ``[index]``)
    starts the rebuild in the background and answers at once, from the previous build when this
    version can read it, instead of waiting for the rebuild (a minute on a monorepo). Otherwise (a
    CLI run, which ends with its answer) the search rebuilds inline, saying why on stderr."""
    global _background_rebuilds
    _background_rebuilds = enabled


def _full_rebuild(root: Path, cfg, loc, reason: str, fresh: CodeFreshness) -> CodeFreshness:
    from autology_mcp.code.config import INDEX_FORMAT_VERSION
    from autology_mcp.code.layout import read_json

    what = f"the code index is being rebuilt from scratch ({reason})"
    if not _background_rebuilds:
        log.warning("%s; this happens once after an upgrade or a change of the [index] settings, and takes a"
                    " while on a large tree", what)
        return _refresh_now(root, cfg, fresh)
    readable = (read_json(loc.manifest) or {}).get("format_version") == INDEX_FORMAT_VERSION
    note = what + ("; until it is done, code and doc hits come from the previous build" if readable
                   else "; until it is done, code and docs are not searched")
    fresh.checked, fresh.note, fresh.previous_build = _build_in_background(
        root, cfg, str(loc.db), what, "rebuilding", note, readable)
    return fresh


def _build_in_background(root: Path, cfg, key: str, what: str, state: str, note: str,
                         readable: bool) -> tuple[str, str, bool]:
    """Start the build of ``key``'s index in the background thread unless one runs already; the
    (state, note, hits from the previous or another index?) of the one running."""
    with _refresh_lock:
        running = _rebuilding.get(key)
        start = running is None
        if start:
            running = _rebuilding[key] = (state, note, readable)
            _refreshing.add(key)
    if start:  # outside the lock: _background() takes it
        log.info("%s, in the background", what)
        _background().submit(_refresh_in_background, root, cfg, key)
    return running


AUTO_BUILD_MAX_FILES = 60_000  # a larger tree's first build takes minutes and gigabytes: only when asked
MISSING_INDEX_NOTE = "the code index is being built for the first time; until it is done, code and docs are not searched"
_missing_index_builds: dict[str, Any] = {}  # index db path -> the Popen of the first build this process started
_missing_index_lock = threading.Lock()
_not_built_unasked: set[str] = set()  # index db paths not built unasked: over AUTO_BUILD_MAX_FILES, or the start failed


def build_missing_index(root: Path, cfg=None) -> str | None:
    """For a server, at start-up (or its first search, if that comes first): when ``root`` is a git
    work tree whose code index was never built (no branch of it has one a build could start from)
    and ``[index] auto_build`` is on (the default), start ``autology index build`` as a process of
    its own, so that searches and hooks have code and docs a little later without anyone running it;
    meanwhile searches say ``building``. The build outlives the server: a client that ends its
    session (``claude -p`` stops the server after one prompt) must not cut every first build short.
    A folder that is not a git work tree (a home directory, say), or a work tree of more than
    AUTO_BUILD_MAX_FILES files (a first build of minutes and gigabytes), is never indexed unasked.
    Returns the note searches give while it runs, or None when nothing was started or is running.
    ``cfg``: the index settings, when the caller has read them already."""
    from autology_mcp.code import git
    from autology_mcp.code.config import load_index_config

    root = Path(root)
    cfg = cfg or load_index_config(root)
    if not cfg.auto_build or not git.is_repo(root):
        return None
    with _missing_index_lock:  # the server's start-up thread and its first search may both ask
        return _start_missing_index_build(root, cfg)


def _start_missing_index_build(root: Path, cfg) -> str | None:
    import subprocess
    import sys

    from autology_mcp.code import git
    from autology_mcp.code.build import compatible_siblings

    cfg, loc = index_location(root, cfg)
    key = str(loc.db)
    if key in _not_built_unasked or loc.exists() or next(compatible_siblings(loc, cfg), None) is not None:
        return None  # not unasked; or up to date, or the first search brings it up to date (_refresh, _first_build)
    if missing_index_build_running(loc):
        return MISSING_INDEX_NOTE
    started = _missing_index_builds.get(key)
    if started is not None and started.returncode != 0:  # it ended without an index: failed; not again and again
        _not_built_unasked.add(key)
        log.warning("the code index's first build failed (exit status %s; its messages are in %s); run "
                    "`autology index build` to see why", started.returncode, loc.dir / "first-build.log")
        return None
    files = git.list_files(root, untracked=cfg.include_untracked) or []
    if len(files) > AUTO_BUILD_MAX_FILES:
        _not_built_unasked.add(key)  # said once per process
        log.warning("this work tree has %d files: its code index is not built unasked (over %d); run "
                    "`autology index build` to build it", len(files), AUTO_BUILD_MAX_FILES)
        return None
    try:
        loc.dir.mkdir(parents=True, exist_ok=True)
        with open(loc.dir / "first-build.log", "wb") as errors:  # what the build says on stderr, kept beside the index
            _missing_index_builds[key] = subprocess.Popen(
                [sys.executable, "-m", "autology_mcp", "--root", str(root), "index", "build"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True)
    except OSError as exc:  # a read-only cache, no process to be had: the searches go on without code
        _not_built_unasked.add(key)  # tried once per process
        log.warning("could not start the code index's first build: %s", exc)
        return None
    log.info("the code index is being built for the first time, in a process of its own (%d files)", len(files))
    return MISSING_INDEX_NOTE


def missing_index_build_running(loc) -> bool:
    """Whether the index of ``loc`` is being built now: by the process this one started, or by any
    other builder holding its lock (another server's first build, an `autology index build`)."""
    from autology_mcp.code.layout import build_running

    proc = _missing_index_builds.get(str(loc.db))
    if proc is not None and proc.poll() is None:
        return True
    return build_running(loc)


def _first_build(root: Path, cfg, loc, other) -> CodeFreshness:
    """The first build of a branch's index, starting from another branch's (only the files that differ
    are indexed again): inline in a CLI run, in the background in a server, whose searches read the
    other branch's index meanwhile (hits in files that differ from it say ``stale``)."""
    fresh = CodeFreshness(exists=True, namespace=loc.namespace)
    what = f"this branch's code index is being built, starting from {other.namespace}'s"
    key = str(loc.db)
    if not _background_rebuilds:
        log.warning("%s (only the files that differ are indexed again)", what)
        fresh = _refresh_now(root, cfg, fresh)
        with _refresh_lock:
            _refreshed[key] = time.monotonic()
        return fresh
    note = what + "; until it is done, code and doc hits come from that index (hits in files that differ say stale)"
    fresh.checked, fresh.note, _ = _build_in_background(root, cfg, key, what, "building", note, True)
    return fresh


def _background():
    global _refresher
    with _refresh_lock:
        if _refresher is None:
            from concurrent.futures import ThreadPoolExecutor

            _refresher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autology-index-refresh")
        return _refresher


def _refresh_in_background(root: Path, cfg, key: str) -> None:
    """A refresh, or a build started by _build_in_background (then the searches waiting for it read
    the new index next, and its end counts as the last check)."""
    try:
        result = _refresh_now(root, cfg, CodeFreshness(exists=True))
        if result.note:
            log.warning("background index refresh failed: %s", result.note)
        elif key in _rebuilding:
            log.info("the code index is built: %d files indexed in %.1f s", result.rebuilt, (result.refresh_ms or 0) / 1000)
    finally:
        with _refresh_lock:
            _refreshing.discard(key)
            if _rebuilding.pop(key, None) is not None:
                _refreshed[key] = time.monotonic()


def stale_paths(where, paths: list[str]) -> set[str]:
    """Of ``paths``, those whose file's size or mtime is not what the code index recorded (changed,
    or gone, since it was indexed): for callers that search without refreshing the index."""
    if not paths or where is None:
        return set()
    _, loc = where
    try:
        rows = dict(
            ((p, (size, mtime)) for p, size, mtime in _db(loc.db).execute(
                "SELECT path, size, mtime_ns FROM files WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(set(paths))),),
            ))
        )
    except (sqlite3.Error, OSError):
        return set(paths)
    stale = set()
    for path in set(paths):
        try:
            st = os.stat(loc.root / path)
        except OSError:
            stale.add(path)
            continue
        if rows.get(path) != (st.st_size, st.st_mtime_ns):
            stale.add(path)
    return stale


_locations: dict[tuple, Any] = {}


def index_location(root: Path, cfg):
    """(index config, location) of the project's repository index. The namespace (branch and
    worktree) is read from git at most once a second per process."""
    from autology_mcp.code.layout import IndexLocation

    key = (str(root), id(cfg), int(time.monotonic()))
    loc = _locations.get(key)
    if loc is None:
        if len(_locations) > 64:
            _locations.clear()
        loc = _locations[key] = IndexLocation.of(root, cfg)
    return cfg, loc


SCOPE_WIDENING = 4  # when the index's candidates hold too few files in scope, take this many times more
FEW_FILES = 10  # ... too few whatever the limit: fewer than a default answer lists


def _further_files(conn, cfg, qwords: list[str], query: str, scored: list, keep, want_files: int) -> list:
    """When the index's candidates are full and hold too few files in scope: fewer than the answer
    may list while the scope took most of them (docs, and only code is wanted), or fewer than
    FEW_FILES whatever took them (one long file whose every chunk holds a common query word). Then
    the best chunk of each further file of a pass SCOPE_WIDENING times wider, best first, up to
    ``want_files`` files in all. They go at the end of the ``code_bm25`` ranking only, so the ranks
    already there do not change; otherwise nothing (no second pass)."""
    in_scope = [x for x in scored if keep(x[1].path)]
    seen = {x[1].path for x in in_scope}
    scope_took = 2 * len(in_scope) < len(scored) and len(seen) < want_files
    few_files = len(seen) < min(want_files, FEW_FILES)
    if len(scored) < cfg.candidates or not (scope_took or few_files):
        return []
    wider, _ = repo_query.score_candidates(_DBView(conn), replace(cfg, candidates=cfg.candidates * SCOPE_WIDENING),
                                           qwords, query)
    further = []
    for x in wider:
        if len(seen) >= want_files:
            break
        if keep(x[1].path) and x[1].path not in seen:
            seen.add(x[1].path)
            further.append(x)
    return further


def with_more_files(ranked: list[tuple], size: int) -> list[tuple]:
    """The first ``size`` of ``ranked`` (chunk, parts), then the best chunk of each file not among them,
    up to ``size`` more: one long module whose every function matches must not leave the other
    files out of the candidates, or a search for 10 results would find one file (unified search
    shows one hit per file). Placed after the first ``size``, they do not change those ranks."""
    head = ranked[:size]
    seen = {x[0].path for x in head}
    more = []
    for x in ranked[size:]:
        if x[0].path not in seen:
            seen.add(x[0].path)
            more.append(x)
            if len(more) == size:
                break
    return head + more


FILE_DECAY = 0.6  # a file's k-th best matching chunk counts FILE_DECAY**k towards the file's score ...
FILE_CHUNKS = 5  # ... over at most this many of its chunks


def with_file_evidence(kept: list[tuple], share: float) -> list[tuple]:
    """``kept`` (chunk, parts) with each chunk's ``relative`` score partly its file's: ``(1 − share) ·
    chunk + share · file``, where a file's score sums its best chunks' (the k-th weighted
    FILE_DECAY**k), relative to the best file's. A file with several matching chunks is more likely
    the one a query is about than a file with one chunk that matched as well (whole-file BM25 sees
    this; a ranking by the best chunk alone does not). Same order in, same order out."""
    if share <= 0 or not kept:
        return kept
    per_file: dict[str, list[float]] = {}
    for c, parts in kept:
        per_file.setdefault(c.path, []).append(parts["relative"])
    file_score = {
        path: sum(v * FILE_DECAY**k for k, v in enumerate(sorted(values, reverse=True)[:FILE_CHUNKS]))
        for path, values in per_file.items()
    }
    best = max(file_score.values()) or 1.0
    return [(c, {**parts, "relative": (1 - share) * parts["relative"] + share * file_score[c.path] / best})
            for c, parts in kept]


def code_channels(
    root: Path, query: str, pool: Pool, size: int, refresh_interval: float | None, want_code: bool, want_docs: bool,
    where=None, file_share: float = 0.0, want_files: int = 10,
) -> tuple[list[ChannelRun], CodeFreshness]:
    """The four code channels over one pass of the index's ranking. ``want_files``: the files the
    answer may list; when the index's candidates hold too few files in scope, a wider pass adds further
    files (:func:`_further_files`)."""
    names = ("code_bm25", "symbols", "paths", "vectors")
    runs = {n: ChannelRun(n) for n in names}
    cfg, loc = where
    exists, other = loc.exists(), None
    if not exists:  # another branch's index, if this branch has none yet
        from autology_mcp.code.build import compatible_siblings

        other = next(compatible_siblings(loc, cfg), None)
    if not exists and other is None:
        # a build running (a server's first build, build_missing_index, or any other), or, in a server whose
        # start-up has not got to it yet, the first build started now: never waited for
        if missing_index_build_running(loc) or (_background_rebuilds and refresh_interval is not None
                                        and build_missing_index(root, cfg) is not None):
            for run in runs.values():
                run.status, run.note = "building", MISSING_INDEX_NOTE
            return list(runs.values()), CodeFreshness(exists=False, namespace=loc.namespace, checked="building",
                                                      note=MISSING_INDEX_NOTE)
        for run in runs.values():
            run.status, run.note = "no_index", "no repository index: run `autology index build`"
        return list(runs.values()), CodeFreshness(exists=False, namespace=loc.namespace,
                                                  note="no repository index: run `autology index build`")
    if other is not None:  # a branch without an index yet, in a work tree that has one for another branch
        if refresh_interval is None:  # the caller takes what exists (and checks its hits: stale_paths)
            fresh = CodeFreshness(exists=True, namespace=loc.namespace, checked="skipped",
                                  note=f"this branch has no code index yet; {other.namespace}'s was read")
        else:
            fresh = _first_build(root, cfg, loc, other)
        if not loc.exists():
            fresh.read_from, fresh.read_location = other.namespace, other
            loc = other
    elif refresh_interval is None:  # the caller takes the index as it is (and checks its hits: stale_paths)
        fresh = CodeFreshness(exists=True, namespace=loc.namespace, checked="skipped")
    else:
        fresh = _refresh(root, cfg, loc, refresh_interval)
        if fresh.checked == "rebuilding" and not fresh.previous_build:
            for run in runs.values():
                run.status, run.note = "rebuilding", fresh.note
            return list(runs.values()), fresh
    qwords = code_query_words(query)
    if not qwords:
        for run in runs.values():
            run.status = "empty"
        return list(runs.values()), fresh
    t0 = time.perf_counter()

    def keep(path: str) -> bool:
        return want_docs if is_doc_path(path) else want_code

    try:
        conn = _db(loc.db)
        st = os.stat(loc.db)
        scored, facts = repo_query.score_candidates(_DBView(conn), cfg, qwords, query)
        further = _further_files(conn, cfg, qwords, query, scored, keep, want_files)
    except (sqlite3.Error, OSError) as exc:
        for run in runs.values():
            run.status, run.note = "error", f"{type(exc).__name__}: {exc}"
        return list(runs.values()), fresh

    def chunk_cand(rid: int, path: str, start: int, end: int, symbol: str | None, kind: str | None,
                   ctype: str, cosine: float | None, area: float) -> Candidate:
        return Candidate(
            key=f"chunk:{path}:{start}-{end}",  # by content, not rowid: ties never depend on build history
            kind="doc" if is_doc_path(path) else "code",
            ref=f"{path}:{start}-{end}",
            title=f"{path}" + (f" · {symbol}" if symbol else ""),
            path=path,
            start_line=start,
            end_line=end,
            cosine=cosine,
            area_prior=area,
            meta={"symbol": symbol, "symbol_kind": kind, "chunk_type": ctype, "rowid": rid},
        )

    best = scored[0][0] if scored and scored[0][0] > 0 else 1.0  # scores relative to the best (scoring.similarity)

    def relative(rows: list) -> list[tuple]:
        """(chunk, parts with its score relative to the best) of the rows in scope, in their order."""
        return [(c, {**parts, "relative": score / best}) for score, c, parts in rows if keep(c.path)]

    kept = with_file_evidence(relative(scored), file_share)  # the index's own order
    where_key = lambda x: (x[0].path, x[0].start)  # noqa: E731  ties: by place, never by rowid
    ranked = {
        "code_bm25": with_more_files(kept, size) + relative(further),
        "vectors": sorted((x for x in kept if x[1]["vector"] > 0), key=lambda x: (-x[1]["vector"], *where_key(x)))[:size],
        "symbols": sorted((x for x in kept if x[1]["symbol"] > 0), key=lambda x: (-x[1]["symbol"], *where_key(x)))[:size],
    }
    by_file: dict[str, tuple] = {}
    for x in kept:
        by_file.setdefault(x[0].path, x)

    identifiers = code_identifiers(query)

    def add(x) -> str:
        c, parts = x
        cand = pool.add(chunk_cand(c.id, c.path, c.start, c.end, c.symbol, c.kind, c.chunk_type,
                                   parts["vector"], parts["area"]))
        cand.meta["index_relative"] = parts["relative"]
        # the exact evidence it holds: whether it defines a name the query asks about (its symbol is that
        # name), then the share of the query's identifiers it holds whole (engine.score: the history prior)
        symbol = (c.symbol or "").lower()
        defines = bool(symbol) and any(symbol == i or symbol.endswith("." + i) for i in identifiers)
        cand.meta["exact"] = (defines, parts.get("exact", 0.0))
        return cand.key

    runs["code_bm25"].ranking = [add(x) for x in ranked["code_bm25"]]
    runs["vectors"].ranking = [add(x) for x in ranked["vectors"]]
    sym = [add(x) for x in ranked["symbols"]]
    t1 = time.perf_counter()
    runs["code_bm25"].ms = (t1 - t0) * 1000
    runs["code_bm25"].note = f"lexical words {facts['lexical_words']}, {len(scored)} chunks scored"

    # symbols: symbol-name matches among the candidates, then exact symbol-table lookups
    t2 = time.perf_counter()
    names_wanted = list(dict.fromkeys([m for m in _IDENT.findall(query) if len(m) >= 4] + [w for w in qwords if len(w) >= 4]))
    exact_keys: list[str] = []
    if names_wanted:
        marks = ",".join("?" * len(names_wanted))
        rows = conn.execute(
            f"SELECT path, name, start_line FROM symbols WHERE name COLLATE NOCASE IN ({marks})"
            " ORDER BY length(name) DESC, path, start_line LIMIT ?",
            (*names_wanted, size),
        ).fetchall()
        for path, name, start in rows:
            if not keep(path):
                continue
            row = conn.execute(
                "SELECT c.id, c.path, c.start_line, c.end_line, c.symbol_name, c.symbol_kind, c.chunk_type, v.vector"
                " FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id WHERE c.path = ? AND c.start_line <= ?"
                " AND c.end_line >= ? ORDER BY c.end_line - c.start_line, c.start_line LIMIT 1",
                (path, start, start),
            ).fetchone()
            if row is None:
                continue
            key = f"chunk:{row[1]}:{row[2]}-{row[3]}"
            if key not in pool.items:
                qvec = _qvec(query, cfg)
                cos = max(0.0, cosine_sparse_dense(qvec, row[7])) if row[7] and len(row[7]) == 4 * cfg.dimension else 0.0
                cand = pool.add(chunk_cand(row[0], row[1], row[2], row[3], row[4], row[5], row[6], cos,
                                           repo_query.area_weight(row[1], cfg.area_weights)))
                cand.meta["exact"] = (name.lower() in identifiers, 0.0)  # it defines the name; its text not read
            exact_keys.append(key)
    runs["symbols"].ranking = list(dict.fromkeys(exact_keys + sym))[:size]
    runs["symbols"].ms = (time.perf_counter() - t2) * 1000

    # paths: files whose path words match the query words
    t3 = time.perf_counter()
    vocab = _vocabulary(conn, str(loc.db), (st.st_ino, st.st_mtime_ns, st.st_size))
    matched_files: set[str] = set()
    common = max(30, int(0.3 * vocab.n_files))  # a word in most paths (the package name) tells nothing
    for w in qwords:
        found = vocab.files.get(w)
        if found is None and len(w) >= 4:
            found = [f for v in vocab.near(w) for f in vocab.files[v]]
        if found and len(found) <= common:
            matched_files.update(found)
    memo: dict = {}
    ranked_files = sorted(
        ((repo_query.path_score(qwords, p, memo), p) for p in matched_files if keep(p)), key=lambda t: (-t[0], t[1])
    )[:size]
    for score, p in ranked_files:
        key = add(by_file[p]) if p in by_file else None
        if key is None:
            row = conn.execute(
                "SELECT c.id, c.path, c.start_line, c.end_line, c.symbol_name, c.symbol_kind, c.chunk_type, v.vector"
                " FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id WHERE c.path = ? ORDER BY c.start_line LIMIT 1",
                (p,),
            ).fetchone()
            if row is None:
                continue
            qvec = _qvec(query, cfg)
            cos = max(0.0, cosine_sparse_dense(qvec, row[7])) if row[7] and len(row[7]) == 4 * cfg.dimension else 0.0
            key = pool.add(chunk_cand(row[0], row[1], row[2], row[3], row[4], row[5], row[6], cos,
                                      repo_query.area_weight(p, cfg.area_weights))).key
        runs["paths"].ranking.append(key)
    runs["paths"].ms = (time.perf_counter() - t3) * 1000
    for run in runs.values():
        if not run.ranking and run.status == "ok":
            run.status = "empty"
    return list(runs.values()), fresh


_qvecs: OrderedDict[tuple, dict] = OrderedDict()


def _qvec(query: str, cfg) -> dict[int, float]:
    key = (query, cfg.dimension, cfg.max_bigrams)
    v = _qvecs.get(key)
    if v is None:
        v = _qvecs[key] = sparse_vector(query, cfg.dimension, cfg.max_bigrams)
        if len(_qvecs) > 256:
            _qvecs.popitem(last=False)
    return v


def load_chunk_texts(loc, rowids: list[int]) -> dict[int, str]:
    """Chunk texts by rowid, from the index at ``loc``."""
    if not rowids:
        return {}
    conn = _db(loc.db)
    marks = ",".join("?" * len(rowids))
    return dict(conn.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", rowids))


# ============================================================================ sessions


def sessions_channel(root: Path, query: str, pool: Pool, size: int, exclude: str | None = None) -> ChannelRun:
    """Past sessions' chunks and handoffs that match ``query``, those of the session ``exclude`` left out."""
    run = ChannelRun("sessions")
    t0 = time.perf_counter()
    try:
        from autology_mcp.sessions import search as session_search  # issue 5; optional until it lands
    except ImportError:
        run.status, run.note = "unavailable", "session memory is not installed in this version"
        return run
    try:
        from autology_mcp.sessions.paths import sessions_dir

        if not sessions_dir(root).is_dir():
            run.status, run.note = "empty", "no session recorded in this project"
            return run
        if not session_search.sessions_enabled(root):
            run.status, run.note = "disabled", "session memory is disabled for this project"
            return run
        hits = session_search.search_sessions(root, query, limit=size)
        hits = [h for h in hits if not exclude or getattr(h, "session_id", None) != exclude]
    except Exception as exc:  # session memory failing must not fail the search
        run.status, run.note = "error", f"{type(exc).__name__}: {exc}"
        run.ms = (time.perf_counter() - t0) * 1000
        return run
    for h in hits:
        kind = "handoff" if getattr(h, "doc_type", "") == "handoff" else "session_chunk"
        cand = Candidate(
            key=f"session:{h.doc_id}",
            kind=kind,
            ref=str(h.doc_id),
            title=str(getattr(h, "title", "") or f"session {h.session_id}"),
            text=str(getattr(h, "text", "") or ""),
            meta={
                "session_id": getattr(h, "session_id", None),
                "timestamp": str(getattr(h, "timestamp", "") or "") or None,
                "turn_start": getattr(h, "turn_start", None),
                "turn_end": getattr(h, "turn_end", None),
                "session_score": float(getattr(h, "score", 0.0) or 0.0),
            },
        )
        run.ranking.append(pool.add(cand).key)
    run.ms = (time.perf_counter() - t0) * 1000
    if not run.ranking:
        run.status = "empty"
    return run



# ============================================================================ the evidence gate's statistics

DF_CAP = 10_000  # a term held by more documents of one source than this counts as held by this many
_df_cache: OrderedDict[tuple, int] = OrderedDict()
_df_lock = threading.Lock()


def history_channel(root: Path, query: str, pool: Pool, size: int,
                    hook: bool = False) -> tuple[ChannelRun, dict[str, Any], Pool, list[tuple[float, tuple[str, ...]]]]:
    """The commits HEAD reaches that best match the query (issue 41: :mod:`autology_mcp.history`), the
    index brought in step with HEAD first (nothing to do when HEAD did not move), the index's freshness
    (``head``, ``commits``, ``sync``), ``pool`` with the commits added, and the best commits by their
    messages alone as ``(score, files)``, best first: the history prior's votes. A ``hook``'s search matches
    only the words at most 5 % of the commits hold (:data:`~autology_mcp.history.index.HOOK_COMMON_SHARE`),
    in the messages alone, not the changed lines' words: BM25 walks every commit holding a word, and a hook
    answers within a small multiple of the interpreter's start."""
    run = ChannelRun("history")
    fresh: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        from autology_mcp.history.config import load_history_config
        from autology_mcp.history.index import HOOK_COMMON_SHARE, HistoryIndex

        if not load_history_config(root).enabled:
            run.status, run.note = "disabled", "the history channel is turned off for this project"
            return run, fresh, pool, []
        index = HistoryIndex(root)
        try:
            synced = index.sync()
            # a hook's search reads the messages alone: the changed words cost more than its budget allows
            hits, by_message = index.ranked(query, size, common_share=HOOK_COMMON_SHARE if hook else None,
                                            changes=not hook)
        finally:
            index.close()
    except Exception as exc:  # the history failing must not fail the search
        run.status, run.note = "error", f"{type(exc).__name__}: {exc}"
        run.ms = (time.perf_counter() - t0) * 1000
        return run, fresh, pool, []
    fresh = {"head": synced.head, "commits": synced.commits, "sync": synced.mode}
    if synced.mode in ("empty", "not a git repository"):
        run.note = synced.mode
    for h in hits:
        files = "\n".join(h.files)
        cand = Candidate(
            key=f"commit:{h.sha}", kind="commit", ref=h.short, title=h.subject,
            # the names its changed lines hold that the query matched are evidence too, shown as one line
            text=h.subject + ("\n" + h.body if h.body else "") + ("\nChanged: " + ", ".join(h.changed) if h.changed else "")
            + ("\nFiles: " + " ".join(h.files) if files else ""),
            meta={"sha": h.sha, "date": h.date, "author": h.author, "files": list(h.files), "bot": h.bot,
                  "changed": list(h.changed)},
        )
        run.ranking.append(pool.add(cand).key)
    run.ms = (time.perf_counter() - t0) * 1000
    if not run.ranking:
        run.status = "empty"
    return run, fresh, pool, [(h.said, h.files) for h in by_message]


def _history_counts(root: Path, terms: list[str]) -> dict[str, int]:
    from autology_mcp.history.index import HistoryIndex

    index = HistoryIndex(root)
    try:
        return index.document_counts(terms, DF_CAP)
    finally:
        index.close()


def document_counts(root: Path, terms: list[str], store: NodeStore | None, code_where, sessions: bool,
                    history: str | None = None) -> dict[str, int]:
    """How many documents in scope hold each term: nodes, code and doc chunks, session documents and
    commits (``history``: the head the history index is at), summed (the evidence gate's ``df``, :mod:`autology_mcp.retrieval.gate`). Counts of nodes and chunks
    are kept per index version, so a hook asking about the same words again reads no index."""
    totals = dict.fromkeys(terms, 0)
    if not terms:
        return totals
    sources = []
    if store is not None:
        sources.append((("nodes", str(root), store.index.generation()), lambda ts: store.index.document_counts(ts, DF_CAP)))
    if code_where is not None:
        db = code_where[1].db
        try:
            st = os.stat(db)
        except OSError:
            st = None
        if st is not None:
            sources.append((("code", str(db), st.st_ino, st.st_mtime_ns, st.st_size), lambda ts: _chunk_counts(db, ts)))
    if history:
        sources.append((("history", str(root), history), lambda ts: _history_counts(root, ts)))
    for version, count in sources:
        with _df_lock:
            known = {t: _df_cache.get((version, t)) for t in terms}
        missing = [t for t, n in known.items() if n is None]
        if missing:
            try:
                found = count(missing)
            except sqlite3.Error as exc:  # the gate then knows less; the search goes on
                log.warning("evidence gate: cannot count %s terms: %s", version[0], exc)
                found = {}
            with _df_lock:
                for t in missing:
                    known[t] = found.get(t, 0)
                    _df_cache[(version, t)] = known[t]
                while len(_df_cache) > 50_000:
                    _df_cache.popitem(last=False)
        for t, n in known.items():
            totals[t] += n or 0
    if sessions:
        try:
            from autology_mcp.sessions.search import document_counts as session_counts

            for t, n in session_counts(root, terms, DF_CAP).items():
                totals[t] += n
        except Exception as exc:  # session memory failing must not fail the search
            log.warning("evidence gate: cannot count session terms: %s", exc)
    return totals


def _chunk_counts(db: Path, terms: list[str]) -> dict[str, int]:
    conn = _db(db)
    return {t: conn.execute("SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                            (_quoted(t), DF_CAP)).fetchone()[0] for t in terms}
