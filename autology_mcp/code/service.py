"""The repository index's plain entry points, shared by the CLI and the MCP tools.

Every function takes the project root, reads the project's config, and returns JSON-ready dicts.
Errors are the typed errors of :mod:`autology_mcp.common.errors` (plus :class:`StaleIndexError`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autology_mcp.code.config import load_index_config
from autology_mcp.code.layout import IndexLocation, build_running, read_json
from autology_mcp.code.scan import untracked_left_out
from autology_mcp.code.store import IndexDB
from autology_mcp.code.watch import IndexWatch
from autology_mcp.common.errors import AutologyError, NotFoundError, ValidationError

if TYPE_CHECKING:  # the builder (multiprocessing, every language's chunker) is imported when a build runs
    from autology_mcp.code.build import Progress


class StaleIndexError(AutologyError):
    """``strict_fresh`` was asked and the index no longer matches the code."""

    def __init__(self, reasons: list[str]):
        self.reasons = reasons
        super().__init__("Index is stale: " + "; ".join(reasons) + " (run `autology index build`)")


def build_index(root: Path, rebuild: bool = False, progress: Progress | None = None) -> dict:
    """Build or incrementally update the index; returns the build summary."""
    from autology_mcp.code import build as build_mod

    return build_mod.build(Path(root), load_index_config(root), rebuild=rebuild, progress=progress)


def verify_index(root: Path, strict: bool = False) -> dict:
    from autology_mcp.code import verify as verify_mod

    return verify_mod.verify(Path(root), load_index_config(root), strict=strict)


def freshness(root: Path) -> dict:
    """A quick staleness check (size/mtime, then hash) without the integrity pass."""
    from autology_mcp.code import build as build_mod
    from autology_mcp.code import verify as verify_mod

    root = Path(root).resolve()
    cfg = load_index_config(root)
    loc = IndexLocation.of(root, cfg)
    manifest = read_json(loc.manifest)
    if manifest is None or not loc.db.exists():
        return {"exists": False, "stale": True, "reasons": ["no index built for this namespace"]}
    with IndexDB(loc.db, create=False) as db:
        src = verify_mod.source_drift(root, cfg, db, fast=True)
    gd = verify_mod.git_drift(root, manifest)
    config_reason = build_mod.manifest_is_compatible(manifest, cfg)
    reasons = []
    if config_reason:
        reasons.append(config_reason)
    if src["drifted"]:
        reasons.append(f"{src['changed_count']} changed, {src['missing_count']} missing, "
                       f"{src['added_count']} new files")
    if gd["drifted"]:
        reasons.append("git HEAD or dirty state differs from the build")
    return {"exists": True, "stale": bool(reasons), "reasons": reasons, "source_drift": src, "git_drift": gd}


def index_status(root: Path) -> dict:
    root = Path(root).resolve()
    cfg = load_index_config(root)
    loc = IndexLocation.of(root, cfg)
    manifest = read_json(loc.manifest)
    record = read_json(loc.build_record) or {}
    out = {"namespace": loc.namespace, "index_dir": str(loc.dir), "exists": manifest is not None and loc.db.exists()}
    left_out = untracked_left_out(root, cfg)
    if left_out:
        out["untracked_left_out"] = {"count": len(left_out), "first": left_out[:5],
                                     "hint": "the index covers the files git tracks: `git add` them (or `git add -N`),"
                                             " or set include_untracked = true under [index] in .autology/config.toml"}
    if build_running(loc):
        out["building"] = True  # a server's first build or update, or another `autology index build`
    if not out["exists"]:
        out["hint"] = ("no index yet; it is being built (searches use it once it is done)" if out.get("building")
                       else "no index yet; run `autology index build`")
        return out
    out.update(
        engine=manifest.get("engine"),
        stats=manifest.get("stats"),
        git=manifest.get("git"),
        built_at=record.get("built_at"),
        db_bytes=record.get("db_bytes"),
        last_build=record.get("last_build"),
        freshness={k: v for k, v in freshness(root).items() if k in ("stale", "reasons")},
    )
    return out


def code_search(root: Path, query: str, top: int = 10, refresh: bool = True, strict_fresh: bool = False,
                progress: Progress | None = None, watch: IndexWatch | None = None) -> dict:
    """Search the index. With ``refresh`` the index is first brought up to date cheaply (and built if
    missing); with ``strict_fresh`` a stale index is refused instead. ``watch`` (a long-lived
    process's file watch, see :mod:`autology_mcp.code.watch`) lets ``refresh`` skip the check of
    every file when no file changed since the last one."""
    from autology_mcp.code import query as query_mod

    root = Path(root).resolve()
    cfg = load_index_config(root)
    if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= 200:
        raise ValidationError("top", f"must be an integer between 1 and 200, got {top!r}")
    loc = IndexLocation.of(root, cfg)
    refreshed = _refresh(root, cfg, loc, progress, watch) if refresh else None
    if not loc.db.exists() or not loc.manifest.exists():
        raise NotFoundError(loc.namespace, "index")
    fresh = None
    if strict_fresh:
        fresh = freshness(root)
        if fresh["stale"]:
            raise StaleIndexError(fresh["reasons"])
    with IndexDB(loc.db, create=False) as db:
        result = query_mod.search(db, cfg, query, top)
    result["trace"]["namespace"] = loc.namespace
    if refreshed is not None:
        result["trace"]["refresh"] = refreshed
    if fresh is not None:
        result["trace"]["stale"] = fresh["stale"]
    return result


def _refresh(root: Path, cfg, loc: IndexLocation, progress: Progress | None, watch: IndexWatch | None) -> dict:
    """Bring the index up to date before a search: the quick size-and-mtime build, skipped when the
    watch counted no change since the last one of the same namespace and settings."""
    import time

    from autology_mcp.code import build as build_mod

    t0 = time.perf_counter()
    tree = watch.tree(cfg.prune_dirs) if watch is not None else None
    generation = tree.generation() if tree is not None else None
    key = (loc.namespace, cfg.settings_hash(), generation)
    if generation is not None and tree.checked == key and loc.exists():
        return {"rebuilt": 0, "deleted": 0, "mode": "unchanged", "checked": "no file event since the last check",
                "duration_s": round(time.perf_counter() - t0, 3)}
    s = build_mod.build(root, cfg, fast=True, progress=progress)
    if generation is not None:
        tree.checked = key  # the events read before this build; any later one makes the next search check
    return {"rebuilt": s["rebuilt"], "deleted": s["deleted"], "mode": s["mode"], "checked": "size and mtime of every file",
            "duration_s": s["duration_s"]}


def export_index(root: Path, out_dir: Path | None = None) -> dict:
    from autology_mcp.code.export import export

    root = Path(root).resolve()
    cfg = load_index_config(root)
    loc = IndexLocation.of(root, cfg)
    return export(loc, cfg, Path(out_dir) if out_dir else loc.dir / "export")
