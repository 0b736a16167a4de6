"""Build the index, incrementally.

A previous index is reused only when (seed 003): it exists and is valid, its config hash matches,
its engine id/version/dimension match, and then per file, the content hash is unchanged. Otherwise
the file is re-chunked and re-vectorized; files that disappeared are deleted. A full build writes a
fresh database beside the old one and swaps it in, so readers never see a half-built index.

``fast=True`` (used before a search) trusts an unchanged size + mtime and skips hashing those files.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context, parent_process
from pathlib import Path

from autology_mcp.code import git
from autology_mcp.code.chunking import chunk_file, language_of
from autology_mcp.code.config import ENGINE_ID, ENGINE_VERSION, INDEX_FORMAT_VERSION, IndexConfig, load_index_config
from autology_mcp.code.layout import (IndexLocation, build_lock, file_sha256, open_file_sha256, read_json,
                                      write_json_atomic)
from autology_mcp.code.scan import ScannedFile, classify_content, scan
from autology_mcp.code.store import ChunkRow, FileRecord, IndexDB, SymbolRow, files_row, fts_bodies_of, path_words, sha256
from autology_mcp.common.errors import StorageError
from autology_mcp.common.text import code_fts_text, code_tokens_of_fts

Progress = Callable[[int, int, str], None]
Processed = tuple[FileRecord, tuple]  # a processed file and its files-table row
POOL_THRESHOLD = 64  # files to (re)process before worker processes pay off
log = logging.getLogger("autology.code.build")


def process_batch(root: str, batch: list[tuple[str, int, int]], cfg: IndexConfig) -> list[Processed | None]:
    """Read, hash, classify, chunk and vectorize each file of a batch of (path, size, mtime_ns), and
    compute everything the writer stores (FTS5 texts, digests), so that the writer only writes; in a
    worker process or not. The vectors of all the batch's chunks are computed together; the result
    is the same as file by file (None for a file that cannot be read)."""
    vectors_f32_of_tokens = _vectorizer()
    parsed = [_parse(root, path, size, mtime_ns, cfg) for path, size, mtime_ns in batch]
    vectors = iter(vectors_f32_of_tokens([t for p in parsed if p is not None for t in p[2]], cfg.dimension,
                                         cfg.max_bigrams))
    out: list[Processed | None] = []
    for p in parsed:
        if p is None:
            out.append(None)
            continue
        rec, chunks, _tokens, bodies, symbol_fts = p
        if chunks:
            rows = [ChunkRow(c.start_line, c.end_line, c.chunk_type, c.symbol_name, c.symbol_kind, c.text,
                             sha256(c.text), next(vectors), body, symbol_fts[c.symbol_name or ""])
                    for c, body in zip(chunks, bodies, strict=True)]
            rec = rec._replace(chunks=rows)
        out.append((rec, files_row(rec)))
    return out


def _vectorizer():
    """The builder's vector function: numpy's (imported by builds only), or the plain-Python one, the
    same bytes about 3x slower, when numpy is missing (an editable install from before it was a
    dependency: ``pip install -e .`` again installs it)."""
    global _numpy_missing_said
    try:
        from autology_mcp.code.vectors_batch import vectors_f32_of_tokens
    except ImportError:
        from autology_mcp.code.vectors import vectors_f32_of_tokens

        if not _numpy_missing_said and parent_process() is None:  # the builder says it, not each worker
            _numpy_missing_said = True
            log.warning("numpy is not installed: the code index computes its vectors in plain Python (the same "
                        "vectors, a slower build); reinstall autology-mcp (e.g. pip install -e .) to get it")
    return vectors_f32_of_tokens


_numpy_missing_said = False


def _parse(root: str, path: str, size: int, mtime_ns: int, cfg: IndexConfig) -> tuple | None:
    """One file read, classified, chunked and normalised: (its record without chunk rows, its chunks,
    each chunk's vector tokens, FTS5 bodies, symbol name -> FTS5 text); None if it cannot be read."""
    try:
        data = (Path(root) / path).read_bytes()
    except OSError:
        return None
    digest = sha256(data)
    language = language_of(path, data[:256])
    skipped = classify_content(data, cfg)
    if skipped:
        return FileRecord(path, digest, size, mtime_ns, language, skipped, [], []), [], [], [], {}
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    chunks, symbols = chunk_file(path, text, cfg)
    # Each chunk's text is normalised once (code_fts_text), for its FTS5 body and for its vector: the
    # vector's text is vector_text(path, symbol, text), whose tokens are the path's, the symbol's and
    # the text's in turn (a newline ends every token), so they are computed apart and joined.
    normalized = [code_fts_text(c.text) for c in chunks]
    symbol_fts: dict[str, str] = {"": ""}
    bodies = fts_bodies_of(normalized, [c.symbol_name for c in chunks], [c.chunk_type for c in chunks], symbol_fts)
    path_tokens = code_tokens_of_fts(code_fts_text(path))
    name_tokens: dict[str, list[str]] = {"": []}
    tokens = []
    for c, norm in zip(chunks, normalized):
        name = c.symbol_name or ""
        if name not in name_tokens:
            fts = symbol_fts.get(name)
            if fts is None:
                fts = symbol_fts[name] = code_fts_text(name)
            name_tokens[name] = code_tokens_of_fts(fts)
        tokens.append(path_tokens + name_tokens[name] + code_tokens_of_fts(norm))
    syms = [SymbolRow(s.name, s.kind, s.start_line, s.end_line, s.signature) for s in symbols]
    rec = FileRecord(path, digest, size, mtime_ns, language, None, [], syms, path_words(path))
    return rec, chunks, tokens, bodies, symbol_fts


def vector_text(path: str, symbol: str | None, text: str) -> str:
    """What a chunk's vector is computed from: its path and symbol name, then its text (the builder
    computes the same vector from the parts: see _parse)."""
    return f"{path}\n{symbol or ''}\n{text}"


def manifest_is_compatible(manifest: dict | None, cfg: IndexConfig) -> str | None:
    """Why a previous index cannot be reused (None when it can)."""
    if manifest is None:
        return "no previous index"
    if manifest.get("format_version") != INDEX_FORMAT_VERSION:
        return "index format changed"
    engine = manifest.get("engine") or {}
    if (engine.get("id"), engine.get("version"), engine.get("dimension")) != (ENGINE_ID, ENGINE_VERSION, cfg.dimension):
        return "engine changed"
    if manifest.get("config_hash") != cfg.build_hash():
        return "config changed"
    return None


def full_rebuild_reason(loc: IndexLocation, cfg: IndexConfig) -> str | None:
    """Why the next build of an existing index will start from scratch (its format, engine or build
    settings changed: after an upgrade, or an edit of ``[index]``), or None when it will be incremental
    or there is no index yet. Reads the manifest only: cheap enough to ask before every refresh."""
    manifest = read_json(loc.manifest)
    if manifest is None or not loc.db.exists():
        return None
    return manifest_is_compatible(manifest, cfg)


def compatible_siblings(loc: IndexLocation, cfg: IndexConfig) -> Iterator[IndexLocation]:
    """The indexes of other branches of this work tree that this version and these settings can
    reuse, most recently built first: the first is the one a first build of ``loc`` starts from."""
    return (other for other in loc.siblings() if manifest_is_compatible(read_json(other.manifest), cfg) is None)


def seed_from_sibling(loc: IndexLocation, cfg: IndexConfig) -> str | None:
    """Copy the newest compatible index of another branch of this work tree into ``loc`` (which has
    none): the first build on a new branch then re-indexes only the files that differ (their size,
    mtime or content), not the whole tree. Returns the namespace copied from, or None."""
    import shutil

    for other in compatible_siblings(loc, cfg):
        loc.dir.mkdir(parents=True, exist_ok=True)
        partial = loc.db.with_name("index.sqlite.seed")
        try:
            with build_lock(other):  # not while that branch's index is being written
                shutil.copyfile(other.db, partial)
                manifest = read_json(other.manifest)
        except OSError:
            partial.unlink(missing_ok=True)
            continue
        if manifest is None:
            partial.unlink(missing_ok=True)
            continue
        os.replace(partial, loc.db)
        write_json_atomic(loc.manifest, manifest)
        return other.namespace
    return None


def make_manifest(db: IndexDB, cfg: IndexConfig, loc: IndexLocation, gitstate: dict) -> dict:
    """The deterministic build contract: no times, nothing that differs between identical builds."""
    return {
        "format_version": INDEX_FORMAT_VERSION,
        "engine": {"id": ENGINE_ID, "version": ENGINE_VERSION, "dimension": cfg.dimension},
        "config_hash": cfg.build_hash(),
        "namespace": loc.namespace,
        "git": gitstate,
        "stats": db.stats(),
        "checksums": db.checksums(),
        "drift_contract": {
            "reuse": "content-hash",
            "verify_checks_source_hashes": True,
            "strict_fails_on_drift": True,
            "strict_fresh_query_fails_on_drift": True,
        },
    }


def build(
    root: Path,
    cfg: IndexConfig | None = None,
    *,
    rebuild: bool = False,
    fast: bool = False,
    progress: Progress | None = None,
    defer_over: int | None = None,
) -> dict:
    """Build or update the index of ``root``; returns a summary (see docs/repo-index.md).

    ``defer_over``: when an incremental update would index more than this many files again (or
    delete them), change nothing and return ``mode: "deferred"`` with their count (``pending``), for
    a caller that would rather run that update in the background than wait for it."""
    root = Path(root).resolve()
    cfg = cfg or load_index_config(root)
    loc = IndexLocation.of(root, cfg)
    started = time.perf_counter()
    with build_lock(loc):
        manifest = read_json(loc.manifest)
        seeded_from = None
        if manifest is None and not rebuild:
            seeded_from = seed_from_sibling(loc, cfg)
            manifest = read_json(loc.manifest) if seeded_from else None
        reason = "rebuild requested" if rebuild else manifest_is_compatible(manifest, cfg)
        if reason is None and not loc.db.exists():
            reason = "index database missing"
        db = None
        if reason is None:
            try:
                db = IndexDB(loc.db, create=False)
                if not db.has_tables():
                    reason = "index database incomplete"
            except StorageError:
                reason = "index database unreadable"
            if reason is not None and db is not None:
                db.close()
                db = None
        full = reason is not None
        target = loc.db.with_name("index.sqlite.new") if full else loc.db
        if full:
            target.unlink(missing_ok=True)
            db = IndexDB(target, without_indexes=True)
            db.conn.execute("PRAGMA synchronous=OFF")
        assert db is not None
        try:
            summary = _update(root, cfg, db, fast, progress, None if full else defer_over)
            if summary.get("pending"):
                db.close()
                summary.update(namespace=loc.namespace, index_dir=str(loc.dir), mode="deferred",
                               reason=f"{summary['pending']} files to index again or delete",
                               duration_s=round(time.perf_counter() - started, 3))
                return summary
            if fast and not full and not summary["rebuilt"] and not summary["deleted"] and not summary["touched"] \
                    and manifest:
                db.close()  # the quick pre-search check found nothing to do: leave everything as it is
                summary.update(namespace=loc.namespace, index_dir=str(loc.dir), mode="incremental",
                               reason="size and mtime", chunks=manifest["stats"]["chunks"],
                               symbols=manifest["stats"]["symbols"], files=manifest["stats"]["files"],
                               files_skipped=manifest["stats"]["files_skipped"], git=manifest.get("git"),
                               duration_s=round(time.perf_counter() - started, 3))
                return summary
            with ThreadPoolExecutor(1) as beside:  # git reads the tree while SQLite sorts the indexes
                asked_git = beside.submit(git.state, root)
                if full:
                    db.create_indexes()
                gitstate = asked_git.result()
            new_manifest = make_manifest(db, cfg, loc, gitstate)
            db.conn.execute("PRAGMA optimize")
        except BaseException:
            db.rollback()
            db.close()
            if full:
                target.unlink(missing_ok=True)
            raise
        db.close()
        new_digest = None
        if full:  # the new file's digest is read while the old file's blocks are freed (~0.5 s per GB)
            with open(target, "rb") as new_file, ThreadPoolExecutor(1) as beside:
                digesting = beside.submit(open_file_sha256, new_file)
                os.replace(target, loc.db)
                new_digest = digesting.result()
        changed = full or summary["rebuilt"] or summary["deleted"] or summary["touched"] or manifest != new_manifest
        if changed:
            write_json_atomic(loc.manifest, new_manifest)
        duration = time.perf_counter() - started
        summary.update(
            namespace=loc.namespace,
            index_dir=str(loc.dir),
            mode="full" if full else "incremental",
            reason=reason or (f"content hashes, starting from the index of {seeded_from}" if seeded_from else "content hashes"),
            chunks=new_manifest["stats"]["chunks"],
            symbols=new_manifest["stats"]["symbols"],
            files=new_manifest["stats"]["files"],
            files_skipped=new_manifest["stats"]["files_skipped"],
            git=gitstate,
            duration_s=round(duration, 3),
        )
        # The database file's digest (verify checks it) costs a read of the whole file, ~1 s per GB:
        # a search's quick refresh (fast) after an edit leaves it unrecorded; a build records it.
        record = read_json(loc.build_record) or {}
        if changed or not record:
            record = {
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "db_sha256": new_digest or (None if fast else file_sha256(loc.db)),
                "db_bytes": loc.db.stat().st_size,
            }
        elif record.get("db_sha256") is None and not fast:
            record["db_sha256"] = file_sha256(loc.db)
        record["last_build"] = {k: v for k, v in summary.items() if k not in ("index_dir", "git")}
        write_json_atomic(loc.build_record, record)
    return summary


def _update(root: Path, cfg: IndexConfig, db: IndexDB, fast: bool, progress: Progress | None,
            defer_over: int | None = None) -> dict:
    files = scan(root, cfg)
    known = db.file_states()
    present = {f.path for f in files}
    deleted = sorted(p for p in known if p not in present)
    todo: list[ScannedFile] = []
    touches: list[ScannedFile] = []
    reused = 0
    for f in files:
        old = known.get(f.path)
        if old is not None:
            if fast and old[1] == f.size and old[2] == f.mtime_ns:
                reused += 1
                continue
            if old[1] == f.size and _hash_or_none(root / f.path) == old[0]:  # another size is another content
                reused += 1
                if (old[1], old[2]) != (f.size, f.mtime_ns):
                    touches.append(f)
                continue
        todo.append(f)
    if defer_over is not None and len(todo) + len(deleted) > defer_over:
        return {"files_scanned": len(files), "pending": len(todo) + len(deleted), "rebuilt": 0, "deleted": 0}
    db.begin()
    for path in deleted:
        db.delete_file(path)
    for f in touches:
        db.touch_file(f.path, f.size, f.mtime_ns)
    touched = len(touches)
    total = len(todo)
    added = sum(1 for f in todo if f.path not in known)
    if progress:
        progress(0, total, "")
    workers = cfg.workers or min(os.cpu_count() or 1, 4)
    if todo:
        _vectorizer()  # says here if numpy is missing, also when the workers do all the work
    if workers > 1 and total >= POOL_THRESHOLD and workers_can_start():
        results = _in_workers(str(root), todo, cfg, workers)
    else:
        results = (r for batch in batches(todo) for r in process_batch(str(root), batch, cfg))
    try:
        _store(db, todo, known, results, progress, total)
    finally:
        results.close()  # the worker pool (if any) is shut down here, also when writing failed
    db.commit()
    return {
        "files_scanned": len(files),
        "reused": reused,
        "rebuilt": total,
        "added": added,
        "deleted": len(deleted),
        "deleted_paths": deleted[:50],
        "touched": touched,
    }


def _hash_or_none(path: Path) -> str | None:
    try:
        return file_sha256(path)
    except OSError:
        return None


BATCH_FILES = 64  # files per task sent to a worker process ...
BATCH_BYTES = 1 << 20  # ... or fewer, once their sizes add up to this
BATCHES_PER_WORKER = 3  # tasks in flight per worker: what bounds the memory of results not yet written


def batches(todo: list[ScannedFile]) -> Iterator[list[tuple[str, int, int]]]:
    """Consecutive runs of ``todo`` (in its order) of at most BATCH_FILES files or BATCH_BYTES bytes."""
    batch: list[tuple[str, int, int]] = []
    size = 0
    for f in todo:
        batch.append((f.path, f.size, f.mtime_ns))
        size += f.size
        if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def workers_can_start() -> bool:
    """Whether worker processes can start here. A worker re-imports the parent's ``__main__`` from its
    file; when that file does not exist (code piped to ``python -``, some embedders), every worker
    dies at start, so the build runs in this process instead."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    main_spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return main_spec is not None or main_file is None or os.path.isfile(main_file)


def _in_workers(root: str, todo: list[ScannedFile], cfg: IndexConfig, workers: int) -> Iterator[Processed | None]:
    """The processed files in ``todo``'s order, from worker processes (this process is the one writer).

    Batches are submitted as results are taken, at most BATCHES_PER_WORKER per worker ahead of the
    writer, so a slow writer holds a bounded number of processed files, never the whole corpus. If
    the pool breaks (a worker killed, or unable to start), the batches not yet done are processed
    here, in order: the build finishes the same, only slower."""
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("forkserver")) as pool:
        pending: deque = deque()
        todo_batches = batches(todo)
        try:
            for batch in todo_batches:
                pending.append((batch, pool.submit(process_batch, root, batch, cfg)))
                if len(pending) >= workers * BATCHES_PER_WORKER:
                    break
            while pending:
                batch, future = pending.popleft()
                try:
                    done = future.result()
                except BrokenProcessPool:
                    for rest in (batch, *(b for b, _ in pending), *todo_batches):
                        yield from process_batch(root, rest, cfg)
                    pending.clear()
                    return
                following = next(todo_batches, None)
                if following is not None:
                    pending.append((following, pool.submit(process_batch, root, following, cfg)))
                yield from done
        finally:
            for _, future in pending:
                future.cancel()


def _store(db: IndexDB, todo: list[ScannedFile], known: dict, results: Iterable[Processed | None],
           progress: Progress | None, total: int) -> None:
    for i, (f, processed) in enumerate(zip(todo, results), 1):
        if f.path in known:
            db.delete_file(f.path)
        if processed is not None:
            db.insert_file(*processed)
        if progress:
            progress(i, total, f.path)


def summary_text(summary: dict) -> str:
    return (
        f"index {summary['namespace']}: {summary['mode']} build ({summary['reason']}); "
        f"files {summary['files_scanned']} scanned, {summary['reused']} reused, {summary['rebuilt']} rebuilt "
        f"({summary['added']} new), {summary['deleted']} deleted, {summary['files_skipped']} skipped; "
        f"{summary['chunks']} chunks, {summary['symbols']} symbols; {summary['duration_s']:.2f} s"
    )
