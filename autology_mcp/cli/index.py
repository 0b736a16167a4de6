"""``autology index build|rebuild|query|verify|export|status``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from autology_mcp.cli.common import command_group


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``autology index`` and its subcommands on the top-level subparsers."""
    leaf = command_group(sub, "index", "repository index: build, query, verify",
                         "Index the project's code and docs, search it, and check it.")
    b = leaf("build", "build or incrementally update the index", _build)
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    r = leaf("rebuild", "rebuild the index from scratch (ignore reuse)", _rebuild)
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    q = leaf("query", "search the index", _query)
    q.add_argument("text", nargs="+", help="what to look for")
    q.add_argument("--top", type=int, default=10, help="number of hits (default 10, at most 200)")
    q.add_argument("--strict-fresh", action="store_true", help="fail if the index is stale (git or source drift)")
    q.add_argument("--refresh", action="store_true", help="re-index changed files first (size/mtime check)")
    v = leaf("verify", "check integrity and drift", _verify)
    v.add_argument("--strict", action="store_true", help="fail on drift too, not only on corruption")
    e = leaf("export", "write files/chunks/symbols JSONL and vectors.f32", _export)
    e.add_argument("--output", "-o", "--out", dest="out", help="output directory (default: <index dir>/export)")
    leaf("status", "show the index's namespace, size and freshness", _status)


def _print_json(data) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


class _ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int, path: str) -> None:
        if not self.enabled or total == 0:
            return
        now = time.monotonic()
        if done not in (0, total) and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        filled = width * done // total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {path[-40:]:<40}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _build(args, root: Path, rebuild: bool = False) -> int:
    from autology_mcp.code import service

    summary = service.build_index(root, rebuild=rebuild, progress=_ProgressBar(not args.quiet and not args.json))
    if args.json:
        _print_json(summary)
    else:
        from autology_mcp.code.build import summary_text

        print(summary_text(summary))
    return 0


def _rebuild(args, root: Path) -> int:
    return _build(args, root, rebuild=True)


def _query(args, root: Path) -> int:
    from autology_mcp.code import service

    text = " ".join(args.text)
    if not args.strict_fresh and not args.refresh:
        fresh = service.freshness(root)
        if fresh["exists"] and fresh["stale"]:
            print(f"warning: index is stale ({'; '.join(fresh['reasons'])}); run `autology index build`",
                  file=sys.stderr)
    result = service.code_search(root, text, top=args.top, refresh=args.refresh, strict_fresh=args.strict_fresh)
    if args.json:
        _print_json(result)
        return 0
    if not result["hits"]:
        print("no hits")
    for i, h in enumerate(result["hits"], 1):
        sym = f"  {h['symbol']} ({h['symbol_kind']})" if h["symbol"] else ""
        print(f"{i:2d}. {h['location']}{sym}  score {h['score']:.3f}")
        print("    " + " · ".join(f"{k} {v:g}" for k, v in h["scores"].items()))
        for line in h["snippet"].split("\n"):
            print(f"    | {line}")
    print(f"({result['trace']['candidates']} candidates, {result['trace']['total_ms']:.1f} ms)")
    return 0


def _verify(args, root: Path) -> int:
    from autology_mcp.code import service

    report = service.verify_index(root, strict=args.strict)
    if args.json:
        _print_json(report)
    else:
        print(f"index {report['namespace']}: {report['status']}")
        for err in report["integrity"]["errors"]:
            print(f"  integrity: {err}")
        for note in report["integrity"].get("notes", []):
            print(f"  note: {note}")
        sd = report.get("source_drift") or {}
        for key in ("changed", "missing", "added"):
            if sd.get(f"{key}_count"):
                shown = ", ".join(sd[key][:10])
                print(f"  source drift: {sd[f'{key}_count']} {key}: {shown}")
        gd = report.get("git_drift") or {}
        if gd.get("drifted"):
            print(f"  git drift: built at {gd['built'].get('head')} (dirty={gd['built'].get('dirty')}), "
                  f"now {gd['current'].get('head')} (dirty={gd['current'].get('dirty')})")
        cd = report.get("config_drift") or {}
        if cd.get("drifted"):
            print(f"  config drift: {cd['reason']}")
        if report["drift"] and not args.strict:
            print("  (drift is a warning; --strict makes it fail; `autology index build` fixes it)")
    return 0 if report["ok"] else 1


def _export(args, root: Path) -> int:
    from autology_mcp.code import service

    result = service.export_index(root, Path(args.out) if args.out else None)
    if args.json:
        _print_json(result)
    else:
        c = result["counts"]
        print(f"exported {c['files']} files, {c['chunks']} chunks, {c['symbols']} symbols to {result['out_dir']}")
    return 0


def _status(args, root: Path) -> int:
    from autology_mcp.code import service

    st = service.index_status(root)
    if args.json:
        _print_json(st)
        return 0
    from autology_mcp.code.config import load_index_config
    from autology_mcp.code.layout import describe_namespace

    about = describe_namespace(root, load_index_config(root), st["namespace"])
    left_out = st.get("untracked_left_out")
    untracked = (f"\n  {left_out['count']} untracked file(s) not indexed ({', '.join(left_out['first'])}"
                 f"{', ...' if left_out['count'] > len(left_out['first']) else ''}): {left_out['hint']}") if left_out else ""
    if not st["exists"]:
        print(f"index {st['namespace']}: none ({st['hint']})\n  {about}{untracked}")
        return 0
    s = st["stats"]
    fresh = st["freshness"]
    print(f"index {st['namespace']} at {st['index_dir']}")
    print(f"  {about}")
    print(f"  {s['files']} files ({s['files_skipped']} skipped), {s['chunks']} chunks, {s['symbols']} symbols, "
          f"{(st.get('db_bytes') or 0) / 1e6:.1f} MB; built {st.get('built_at')} at {(st['git'] or {}).get('head')}")
    print("  fresh" if not fresh["stale"] else f"  stale: {'; '.join(fresh['reasons'])}")
    if st.get("building"):
        print("  a build is running now (a server's, or another `autology index build`)")
    if untracked:
        print(untracked.lstrip("\n"))
    return 0
