"""Check the index: integrity (is it what the build wrote?) and drift (does it still match the code?).

Integrity: artifacts present; the database file's digest matches the build record; SQLite's quick
check; tables present; counts agree with the manifest; every chunk's text hashes to its
``text_hash``, every vector has the right length; per-file digests and the manifest checksums
recompute; every chunk and symbol links to its file's hash.

Drift: source drift (indexed files changed or missing, new files not indexed), git drift (HEAD or
dirty state differ from the build) and config drift (settings that change the index differ).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from autology_mcp.code import git
from autology_mcp.code.build import manifest_is_compatible
from autology_mcp.code.config import IndexConfig
from autology_mcp.code.layout import IndexLocation, build_lock, file_sha256, read_json
from autology_mcp.code.scan import scan
from autology_mcp.code.store import TABLES, IndexDB, chunk_line, sha256, symbol_line

MAX_LISTED = 50


def _integrity(loc: IndexLocation, cfg: IndexConfig, notes: list[str]) -> tuple[list[str], dict, IndexDB | None]:
    errors: list[str] = []
    manifest = read_json(loc.manifest)
    record = read_json(loc.build_record)
    if manifest is None:
        errors.append(f"manifest missing or unreadable: {loc.manifest}")
    if record is None:
        errors.append(f"build record missing or unreadable: {loc.build_record}")
    if not loc.db.exists():
        errors.append(f"index database missing: {loc.db}")
        return errors, manifest or {}, None
    if record is not None and record.get("db_sha256") is None:
        notes.append("the database file's digest is not recorded: a search's quick refresh updated the index last "
                     "(`autology index build` records it); the content checks ran")
    elif record is not None and record.get("db_sha256") != file_sha256(loc.db):
        errors.append("index database changed since the last build (file checksum mismatch)")
    try:
        db = IndexDB(loc.db, create=False)
        check = db.conn.execute("PRAGMA quick_check").fetchall()
        if check != [("ok",)]:
            errors.append(f"sqlite quick_check: {'; '.join(r[0] for r in check[:5])}")
        if not db.has_tables():
            errors.append(f"index database lacks tables (expected {', '.join(TABLES)})")
            return errors, manifest or {}, db
    except Exception as exc:  # a corrupt file can fail in many ways (sqlite3.Error, StorageError, ...)
        errors.append(f"index database unreadable: {exc}")
        return errors, manifest or {}, None
    try:
        errors.extend(_content_checks(db, manifest, cfg))
    except sqlite3.Error as exc:
        errors.append(f"index database unreadable: {exc}")
    return errors, manifest or {}, db


def _content_checks(db: IndexDB, manifest: dict | None, cfg: IndexConfig) -> list[str]:
    errors: list[str] = []
    conn = db.conn
    if manifest is not None:
        if manifest.get("stats") != db.stats():
            errors.append(f"manifest stats {manifest.get('stats')} differ from the database's {db.stats()}")
        if manifest.get("checksums") != db.checksums():
            errors.append("manifest checksums differ from the database's per-file digests")
    n_chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    n_vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    n_symbols = conn.execute("SELECT count(*) FROM symbols").fetchone()[0]
    sums = conn.execute("SELECT coalesce(sum(chunk_count),0), coalesce(sum(symbol_count),0) FROM files").fetchone()
    if n_chunks != sums[0]:
        errors.append(f"{n_chunks} chunk rows but the files table counts {sums[0]}")
    if n_vectors != n_chunks:
        errors.append(f"{n_vectors} vector rows for {n_chunks} chunks")
    if n_symbols != sums[1]:
        errors.append(f"{n_symbols} symbol rows but the files table counts {sums[1]}")
    dim_bytes = 4 * (manifest or {}).get("engine", {}).get("dimension", cfg.dimension)
    bad_text = bad_vec = bad_link = bad_digest = 0
    for path, fhash, _size, _mt, _lang, _skip, _cc, _sc, cd, sd, vd in list(db.iter_file_rows()):
        ch, vh, sh = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
        for s, e, ctype, sym, kind, text, thash, chash, vec in db.chunks_of(path):
            if sha256(text) != thash:
                bad_text += 1
                if bad_text <= 5:
                    errors.append(f"chunk text hash mismatch: {path}:{s}-{e}")
            if vec is None or len(vec) != dim_bytes:
                bad_vec += 1
                if bad_vec <= 5:
                    errors.append(f"vector missing or of wrong length: {path}:{s}-{e}")
            if chash != fhash:
                bad_link += 1
                if bad_link <= 5:
                    errors.append(f"chunk links to another file version: {path}:{s}-{e}")
            ch.update(chunk_line(path, s, e, ctype, sym, kind, thash, chash))
            vh.update(vec or b"")
        for name, kind, s, e, sig, shash in db.symbols_of(path):
            if shash != fhash:
                bad_link += 1
                if bad_link <= 5:
                    errors.append(f"symbol links to another file version: {path} {name}")
            sh.update(symbol_line(path, name, kind, s, e, sig, shash))
        if (ch.hexdigest(), sh.hexdigest(), vh.hexdigest()) != (cd, sd, vd):
            bad_digest += 1
            if bad_digest <= 5:
                errors.append(f"per-file digest mismatch: {path}")
    orphans = conn.execute("SELECT count(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)").fetchone()[0]
    if orphans:
        errors.append(f"{orphans} chunks belong to no indexed file")
    for label, n in (("chunk text hashes", bad_text), ("vectors", bad_vec), ("links", bad_link),
                     ("file digests", bad_digest)):
        if n > 5:
            errors.append(f"... {n} bad {label} in all")
    return errors


def source_drift(root: Path, cfg: IndexConfig, db: IndexDB, fast: bool = False) -> dict:
    """Indexed files that changed or vanished, and new files the index lacks.

    ``fast`` trusts an unchanged size + mtime; otherwise every indexed file is re-hashed.
    """
    current = {f.path: f for f in scan(root, cfg)}
    changed, missing = [], []
    for path, (fhash, size, mtime) in sorted(db.file_states().items()):
        f = current.get(path)
        if f is None:
            missing.append(path)
            continue
        if fast and f.size == size and f.mtime_ns == mtime:
            continue
        try:
            if file_sha256(root / path) != fhash:
                changed.append(path)
        except OSError:
            missing.append(path)
    known = db.file_states()
    added = sorted(p for p in current if p not in known)
    return {
        "drifted": bool(changed or missing or added),
        "changed": changed[:MAX_LISTED], "changed_count": len(changed),
        "missing": missing[:MAX_LISTED], "missing_count": len(missing),
        "added": added[:MAX_LISTED], "added_count": len(added),
    }


def git_drift(root: Path, manifest: dict) -> dict:
    built = manifest.get("git") or {}
    now = git.state(root)
    drifted = (built.get("head"), built.get("dirty")) != (now["head"], now["dirty"])
    return {"drifted": drifted, "built": built, "current": now}


def verify(root: Path, cfg: IndexConfig, strict: bool = False) -> dict:
    """The full report; ``ok`` is False on any integrity error, and with ``strict`` on any drift."""
    root = Path(root).resolve()
    loc = IndexLocation.of(root, cfg)
    if not loc.dir.exists() or not (loc.manifest.exists() or loc.db.exists()):
        return {"ok": False, "status": "missing", "namespace": loc.namespace, "index_dir": str(loc.dir),
                "integrity": {"ok": False, "errors": ["no index built for this namespace; run `autology index build`"]},
                "strict": strict}
    with build_lock(loc):  # never look at an index while a build is writing it
        notes: list[str] = []
        errors, manifest, db = _integrity(loc, cfg, notes)
        report: dict = {"namespace": loc.namespace, "index_dir": str(loc.dir), "strict": strict,
                        "integrity": {"ok": not errors, "errors": errors, "notes": notes}}
        try:
            config_reason = manifest_is_compatible(manifest or None, cfg)
            report["config_drift"] = {"drifted": config_reason is not None, "reason": config_reason}
            report["git_drift"] = git_drift(root, manifest)
            report["source_drift"] = source_drift(root, cfg, db) if db is not None else {"drifted": True}
        finally:
            if db is not None:
                db.close()
    drift = any(report[k]["drifted"] for k in ("config_drift", "git_drift", "source_drift"))
    report["drift"] = drift
    if errors:
        report["status"] = "corrupt"
    else:
        report["status"] = "drift" if drift else "ok"
    report["ok"] = not errors and not (strict and drift)
    return report
