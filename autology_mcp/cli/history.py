"""``autology history``: the repository's own commits as memory (issue 41).

    autology history search why did we switch the pool    # the best commits: sha, date, subject, files, names changed
    autology history build                                 # bring the index in step with HEAD (searches do too)
    autology history status                                # commits indexed, the head, where the index lives
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from autology_mcp.cli.common import command_group


def add_commands(sub: argparse._SubParsersAction) -> None:
    leaf = command_group(
        sub,
        "history",
        "the repository's commits as memory: search them by what they say, touched and changed",
        "The repository's own commits (the newest 50,000 HEAD reaches), searchable by their subject, body,"
        " the files they touched and the names in the lines they changed; `autology search` and the prompt hook"
        " use them too. Nothing is fetched.",
    )
    p = leaf("search", "search the commits", _search)
    p.add_argument("text", nargs="+", help="what to look for")
    p.add_argument("--limit", "-n", type=int, default=10, help="number of commits (1-200, default 10)")
    leaf("build", "bring the index in step with HEAD (a search does it too)", _build)
    leaf("status", "commits indexed, the head, where the index lives", _status)


def _index(root: Path):
    from autology_mcp.history.index import HistoryIndex

    return HistoryIndex(root)


def _sync_note(result) -> str:
    if result.mode == "disabled":
        return "the history channel is off ([tool.autology.history] enabled = false)"
    if result.mode in ("empty", "not a git repository"):
        return f"no commits to index: {result.mode}"
    return ""


def _search(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.common.errors import ValidationError

    if not 1 <= args.limit <= 200:
        raise ValidationError("limit", f"must be a whole number from 1 to 200, got {args.limit}")
    index = _index(root)
    try:
        synced = index.sync()
        hits = index.search(" ".join(args.text), args.limit)
    finally:
        index.close()
    note = _sync_note(synced)
    if args.json:
        print(json.dumps([{**h.__dict__, "files": list(h.files), "changed": list(h.changed)} for h in hits], indent=2,
                         ensure_ascii=False))
    elif note:
        print(note, file=sys.stderr)
    elif not hits:
        print("no commit mentions that")
    else:
        for h in hits:
            files = ", ".join(h.files[:4]) + (f" (+{len(h.files) - 4})" if len(h.files) > 4 else "")
            print(f"{h.short}  {h.date[:10]}  {h.score:.3f}  {h.subject}" + ("  [bot]" if h.bot else ""))
            if files:
                print(f"            {files}")
            if h.changed:
                print(f"            changed: {', '.join(h.changed[:6])}")
    return 0


def _build(args: argparse.Namespace, root: Path) -> int:
    index = _index(root)
    try:
        result = index.sync()
    finally:
        index.close()
    data: dict[str, Any] = dict(result.__dict__)
    note = _sync_note(result)
    human = note or (f"✓ history {result.mode}: {result.commits:,} commit(s) indexed (+{result.added}, "
                     f"-{result.removed}) in {result.seconds:.2f} s, at {(result.head or '')[:10]}")
    print(json.dumps(data, indent=2) if args.json else human)
    return 0


def _status(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.history.config import load_history_config

    config = load_history_config(root)
    index = _index(root)
    try:
        data = {"enabled": config.enabled, "max_commits": config.max_commits, "path": str(index.path),
                "commits": index.count() if index.path.exists() else 0, "head": index.head() if index.path.exists() else ""}
    finally:
        index.close()
    human = (f"history {'on' if config.enabled else 'OFF'}: {data['commits']:,} commit(s) indexed"
             + (f" at {data['head'][:10]}" if data["head"] else " (not built yet: a search or `autology history build` builds it)")
             + f", at most {config.max_commits:,}; {data['path']}")
    print(json.dumps(data, indent=2) if args.json else human)
    return 0
