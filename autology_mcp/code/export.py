"""Write the index as the seed's inspection artifacts.

``files.jsonl``, ``chunks.jsonl``, ``symbols.jsonl`` (one JSON object a line, ordered by path and
line), ``vectors.f32`` (row-major float32, little-endian; row ``i`` is the chunk whose
``vector_row`` is ``i``) and ``manifest.json`` (the index manifest plus the exported files'
SHA-256 under ``export_checksums``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autology_mcp.code.config import IndexConfig
from autology_mcp.code.layout import IndexLocation, read_json, write_json_atomic
from autology_mcp.code.query import area_weight
from autology_mcp.code.store import IndexDB
from autology_mcp.common.errors import NotFoundError, StorageError


def export(loc: IndexLocation, cfg: IndexConfig, out_dir: Path) -> dict:
    manifest = read_json(loc.manifest)
    if manifest is None or not loc.db.exists():
        raise NotFoundError(loc.namespace, "index")
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        sums = {}
        counts = {"files": 0, "chunks": 0, "symbols": 0}
        with IndexDB(loc.db, create=False) as db, \
                open(out_dir / "files.jsonl", "w", encoding="utf-8") as ff, \
                open(out_dir / "chunks.jsonl", "w", encoding="utf-8") as cf, \
                open(out_dir / "symbols.jsonl", "w", encoding="utf-8") as sf, \
                open(out_dir / "vectors.f32", "wb") as vf:
            row = 0
            for path, fhash, size, mtime, lang, skipped, cc, sc, _cd, _sd, _vd in db.iter_file_rows():
                area = area_weight(path, cfg.area_weights)
                ff.write(_line({"path": path, "language": lang, "hash": fhash, "size_bytes": size,
                                "mtime_ms": mtime // 1_000_000, "skipped": skipped, "chunks": cc, "symbols": sc,
                                "area": path.split("/", 1)[0] if "/" in path else ".", "area_weight": area}))
                counts["files"] += 1
                for s, e, ctype, sym, kind, text, thash, chash, vec in db.chunks_of(path):
                    cf.write(_line({"path": path, "start_line": s, "end_line": e, "chunk_type": ctype,
                                    "symbol_name": sym, "symbol_kind": kind, "text": text, "text_hash": thash,
                                    "file_hash": chash, "vector_row": row, "area_weight": area}))
                    vf.write(vec)
                    row += 1
                counts["chunks"] += cc
                for i, (name, kind, s, e, sig, shash) in enumerate(db.symbols_of(path)):
                    sf.write(_line({"id": f"{path}#{name}@{s}", "path": path, "name": name, "kind": kind,
                                    "start_line": s, "end_line": e, "signature": sig, "file_hash": shash}))
                    counts["symbols"] += 1
        for name in ("files.jsonl", "chunks.jsonl", "symbols.jsonl", "vectors.f32"):
            h = hashlib.sha256()
            with open(out_dir / name, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            sums[name] = h.hexdigest()
        write_json_atomic(out_dir / "manifest.json", {**manifest, "export_checksums": sums})
    except OSError as exc:
        raise StorageError(str(out_dir), f"cannot write export: {exc.strerror or exc}") from exc
    return {"out_dir": str(out_dir), "counts": counts, "vector_rows": row, "checksums": sums}


def _line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"
